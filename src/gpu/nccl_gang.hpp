// An NCCL communicator over the members of a gang (the GPU bundles of a placement group), owned
// by one RAII object. Weft only forms the communicator — bounded in time and with an error that
// names the member, device and host — and then hands it out: the collectives are NCCL's own.
//
// Bootstrap: member 0 calls make_unique_id(); the runtime broadcasts the bytes to the members
// (the broadcast is its business, e.g. Weft messages or MPI_Bcast); every member calls join().
// bootstrap() does the three steps around a caller-supplied broadcast.
//
// The communicator is created non-blocking (ncclConfig_t::blocking = 0) so that a member that
// never arrives cannot hang the others: init is polled and aborted at the deadline. NCCL keeps
// that mode for the communicator's lifetime, so a collective may return ncclInProgress: pass its
// result to check(), which waits (bounded) and turns failures into GangError.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/gpu_error.hpp"

// Same declaration as nccl.h, so this header stays free of NCCL and CUDA headers.
struct ncclComm;
typedef struct ncclComm* ncclComm_t;

namespace weft::gpu {

class NcclGang {
 public:
  using UniqueId = std::vector<std::byte>;
  static constexpr size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
  static constexpr std::chrono::milliseconds kDefaultTimeout{60000};

  // Member 0: a fresh ncclUniqueId as bytes. Throws GpuError when this build or host has no GPU.
  static UniqueId make_unique_id();

  // Joins the gang as `member` (0..gang_size-1) on CUDA device `device` (this process's ordinal).
  // Returns once every member has joined; throws GangError on bad arguments, on an NCCL error and
  // when `timeout` passes first (the half-made communicator is aborted).
  static NcclGang join(const UniqueId& id, int member, int gang_size, int device,
                       std::chrono::milliseconds timeout = kDefaultTimeout);

  // make_unique_id on member 0, `broadcast` (given member 0's id on member 0 and an empty id
  // elsewhere, returns member 0's id on every member), then join. When member 0 cannot make an
  // id it broadcasts an empty one, so the others fail fast with a GangError instead of hanging.
  static NcclGang bootstrap(int member, int gang_size, int device,
                            const std::function<UniqueId(const UniqueId&)>& broadcast,
                            std::chrono::milliseconds timeout = kDefaultTimeout);

  NcclGang() = default;
  NcclGang(NcclGang&& other) noexcept;
  NcclGang& operator=(NcclGang&& other) noexcept;
  NcclGang(const NcclGang&) = delete;
  NcclGang& operator=(const NcclGang&) = delete;
  // Finalizes and destroys the communicator (bounded; aborts it if a peer is gone).
  ~NcclGang();

  ncclComm_t comm() const { return comm_; }
  int member() const { return member_; }
  int size() const { return size_; }
  int device() const { return device_; }
  explicit operator bool() const { return comm_ != nullptr; }

  // Waits until operations enqueued on the communicator have been issued (non-blocking mode).
  void wait_ready(std::chrono::milliseconds timeout = kDefaultTimeout) const;
  // Checks an ncclResult_t returned by an NCCL call on this communicator: ncclInProgress waits
  // (wait_ready), any error throws GangError naming `what`, the member and the device.
  void check(int nccl_result, std::string_view what,
             std::chrono::milliseconds timeout = kDefaultTimeout) const;
  // Aborts the communicator now (e.g. a member is known dead); the gang is empty afterwards.
  void abort() noexcept;

 private:
  NcclGang(ncclComm_t comm, int member, int size, int device)
      : comm_(comm), member_(member), size_(size), device_(device) {}
  void release() noexcept;

  ncclComm_t comm_ = nullptr;
  int member_ = -1;
  int size_ = 0;
  int device_ = -1;
};

}  // namespace weft::gpu
