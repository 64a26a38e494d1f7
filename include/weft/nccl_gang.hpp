// NCCL gangs: one NCCL communicator over the actors (or tasks) placed in a group's bundles.
//   // in a method of an actor created with {.num_gpus = 1, .placement_group = pg,
//   //                                          .bundle_index = i}:
//   weft::NcclGang gang = weft::nccl_gang(pg);           // member i of pg's bundle count
//   ncclAllReduce(..., weft::nccl_comm(gang), stream);   // #include <weft/nccl.hpp>
// Member 0 makes the NCCL unique id and publishes it through Weft (a named actor); the other
// members fetch it and every member joins on its assigned GPU, all within one timeout. Nothing
// waits for ever: a member that never comes, a member without a GPU or an NCCL failure ends in
// NcclGangError naming the group, the member and what it waited for.
//
// This header has no CUDA or NCCL include; weft/nccl.hpp (include it only where CUDA and NCCL
// are) gives the communicator its ncclComm_t type.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "weft/errors.hpp"
#include "weft/placement_group.hpp"

namespace weft {

struct NcclGangOptions {
  int member = -1;  // this caller's rank in the gang; -1: the index of the bundle it runs in
  int size = 0;     // members; 0: one per bundle of the group
  int device = -1;  // CUDA device; -1: weft::assigned_gpus()[0]
  std::chrono::milliseconds timeout{60000};  // the whole bootstrap: id exchange and NCCL init
  std::string name;                          // tells several gangs of one group apart
};

// A gang could not be formed (or an NCCL call on it failed): who, in which group, and why.
class NcclGangError : public Error {
 public:
  NcclGangError(const std::string& what, uint64_t group, int member, int size)
      : Error(what), group_(group), member_(member), size_(size) {}
  uint64_t group() const { return group_; }
  int member() const { return member_; }
  int size() const { return size_; }

 private:
  uint64_t group_;
  int member_, size_;
};

// Owns one member's communicator; destroying it finalizes the communicator (bounded, aborted
// when a peer is gone). Move-only.
class NcclGang {
 public:
  NcclGang();
  ~NcclGang();
  NcclGang(NcclGang&&) noexcept;
  NcclGang& operator=(NcclGang&&) noexcept;

  int member() const;
  int size() const;
  int device() const;
  explicit operator bool() const;
  // The ncclComm_t, untyped; weft::nccl_comm(gang) in weft/nccl.hpp gives it its type.
  void* native_handle() const;
  // Passes an ncclResult_t of a call on this communicator: ncclInProgress waits (bounded by
  // `timeout`), an error throws NcclGangError naming `what`, the member and the device.
  void check(int nccl_result, std::string_view what,
             std::chrono::milliseconds timeout = std::chrono::milliseconds(60000)) const;
  // Aborts the communicator now (a member is known dead); the gang is empty afterwards.
  void abort();

 private:
  friend NcclGang nccl_gang(const PlacementGroup&, NcclGangOptions);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Joins the gang of `pg` (call it once in every member; see the top of this file). Throws
// weft::Error for bad arguments and in a Weft built without NCCL, NcclGangError otherwise.
NcclGang nccl_gang(const PlacementGroup& pg, NcclGangOptions options = {});

// True when this Weft was built with CUDA and NCCL (WEFT_WITH_CUDA); says nothing of GPUs.
bool nccl_available();

}  // namespace weft
