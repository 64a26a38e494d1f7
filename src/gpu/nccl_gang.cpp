#include "gpu/nccl_gang.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

#include "common/log.hpp"

#if WEFT_HAVE_CUDA
#include <cuda_runtime.h>
#include <nccl.h>
static_assert(NCCL_UNIQUE_ID_BYTES == weft::gpu::NcclGang::kUniqueIdBytes, "ncclUniqueId size");
#endif

namespace weft::gpu {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string host_name() {
  char h[256] = {0};
  if (gethostname(h, sizeof(h) - 1) != 0) return "?";
  return h;
}

milliseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
}

// "member 1 of 4 on device 0, host gpu017"
std::string who(int member, int size, int device) {
  return "member " + std::to_string(member) + " of " + std::to_string(size) + " on device " +
         std::to_string(device) + ", host " + host_name();
}

[[noreturn]] void gang_fail(const std::string& what, int member, int size, int device,
                            milliseconds elapsed) {
  throw GangError("NCCL gang " + who(member, size, device) + ": " + what + " (after " +
                      std::to_string(elapsed.count()) + " ms)",
                  member, size, device, elapsed);
}

#if WEFT_HAVE_CUDA
// Polls the communicator's state with back-off: non-blocking NCCL does its work on its own
// threads, so this thread only needs to look now and then (a spin would steal a core from it).
// Returns the final state, or ncclInProgress when the deadline passed first.
ncclResult_t poll_state(ncclComm_t comm, Clock::time_point deadline) {
  auto nap = std::chrono::microseconds(50);
  for (;;) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t rc = ncclCommGetAsyncError(comm, &state);
    if (rc != ncclSuccess) return rc;
    if (state != ncclInProgress) return state;
    if (Clock::now() >= deadline) return ncclInProgress;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(10000));
  }
}

std::string nccl_text(ncclResult_t rc, ncclComm_t comm) {
  std::string s = std::string(ncclGetErrorString(rc));
  const char* last = ncclGetLastError(comm);
  if (last && *last) s += ": " + std::string(last);
  return s;
}

int visible_devices(std::string* why) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    *why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    return 0;
  }
  if (n == 0) *why = "the CUDA driver reports no devices";
  return n;
}

// Restores the caller's current device: join() must select the gang's device for NCCL, but the
// thread may be serving other work that expects its own device.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    ok_ = cudaSetDevice(device) == cudaSuccess;
    if (!ok_) (void)cudaGetLastError();
  }
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  bool ok() const { return ok_; }

 private:
  int previous_ = -1;
  bool ok_ = false;
};
#endif

constexpr const char* kNoCuda =
    "weft was built without CUDA/NCCL (configure with -DWEFT_WITH_CUDA=ON on a host with the "
    "CUDA toolkit and NCCL)";

}  // namespace

NcclGang::UniqueId NcclGang::make_unique_id() {
#if WEFT_HAVE_CUDA
  std::string why;
  if (visible_devices(&why) == 0) {
    throw GpuError("cannot create an NCCL unique id on host " + host_name() + ": no usable GPU (" +
                   why + ")");
  }
  ncclUniqueId id;
  ncclResult_t rc = ncclGetUniqueId(&id);
  if (rc != ncclSuccess) {
    throw GpuError("ncclGetUniqueId failed on host " + host_name() + ": " + ncclGetErrorString(rc) +
                   " (check NCCL_SOCKET_IFNAME)");
  }
  UniqueId out(kUniqueIdBytes);
  std::memcpy(out.data(), id.internal, kUniqueIdBytes);
  return out;
#else
  throw GpuError(std::string("cannot create an NCCL unique id: ") + kNoCuda);
#endif
}

NcclGang NcclGang::join(const UniqueId& id, int member, int size, int device,
                        milliseconds timeout) {
  const auto t0 = Clock::now();
  if (size < 1) gang_fail("gang size must be >= 1", member, size, device, since(t0));
  if (member < 0 || member >= size) {
    gang_fail("member index out of range [0, " + std::to_string(size) + ")", member, size, device,
              since(t0));
  }
  if (id.size() != kUniqueIdBytes) {
    gang_fail("unique id has " + std::to_string(id.size()) + " bytes, expected " +
                  std::to_string(kUniqueIdBytes) +
                  (id.empty() ? " (member 0 could not create one; see its error)" : ""),
              member, size, device, since(t0));
  }
  if (timeout.count() <= 0) gang_fail("timeout must be positive", member, size, device, since(t0));
#if WEFT_HAVE_CUDA
  std::string why;
  int n = visible_devices(&why);
  if (n == 0) gang_fail("no usable GPU (" + why + ")", member, size, device, since(t0));
  if (device < 0 || device >= n) {
    const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
    gang_fail("device " + std::to_string(device) + " is not visible to this process (" +
                  std::to_string(n) + " visible, CUDA_VISIBLE_DEVICES=" + (cvd ? cvd : "<unset>") +
                  ")",
              member, size, device, since(t0));
  }
  DeviceGuard guard(device);
  if (!guard.ok()) gang_fail("cudaSetDevice failed", member, size, device, since(t0));

  ncclUniqueId uid;
  std::memcpy(uid.internal, id.data(), kUniqueIdBytes);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t rc = ncclCommInitRankConfig(&comm, size, uid, member, &config);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    std::string text = nccl_text(rc, comm);
    if (comm) ncclCommAbort(comm);
    gang_fail("ncclCommInitRankConfig failed: " + text, member, size, device, since(t0));
  }
  ncclResult_t state = poll_state(comm, t0 + timeout);
  if (state == ncclInProgress) {
    ncclCommAbort(comm);
    gang_fail("communicator init timed out (limit " + std::to_string(timeout.count()) +
                  " ms) waiting for the other members: check that all " + std::to_string(size) +
                  " members joined with the same unique id and that NCCL can reach them "
                  "(NCCL_SOCKET_IFNAME)",
              member, size, device, since(t0));
  }
  if (state != ncclSuccess) {
    std::string text = nccl_text(state, comm);
    ncclCommAbort(comm);
    gang_fail("communicator init failed: " + text, member, size, device, since(t0));
  }
  WEFT_LOG(Debug) << "NCCL gang " << who(member, size, device) << " formed in " << since(t0).count()
                  << " ms";
  return NcclGang(comm, member, size, device);
#else
  gang_fail(kNoCuda, member, size, device, since(t0));
#endif
}

NcclGang NcclGang::bootstrap(int member, int size, int device,
                             const std::function<UniqueId(const UniqueId&)>& broadcast,
                             milliseconds timeout) {
  UniqueId mine;
  std::exception_ptr failure;
  if (member == 0) {
    try {
      mine = make_unique_id();
    } catch (...) {
      failure = std::current_exception();  // still broadcast (empty) so the others do not hang
    }
  }
  UniqueId id = broadcast(mine);
  if (failure) std::rethrow_exception(failure);
  return join(id, member, size, device, timeout);
}

NcclGang::NcclGang(NcclGang&& o) noexcept
    : comm_(o.comm_), member_(o.member_), size_(o.size_), device_(o.device_) {
  o.comm_ = nullptr;
}

NcclGang& NcclGang::operator=(NcclGang&& o) noexcept {
  if (this != &o) {
    release();
    comm_ = o.comm_;
    member_ = o.member_;
    size_ = o.size_;
    device_ = o.device_;
    o.comm_ = nullptr;
  }
  return *this;
}

NcclGang::~NcclGang() { release(); }

void NcclGang::release() noexcept {
#if WEFT_HAVE_CUDA
  if (!comm_) return;
  // Finalize flushes outstanding work and needs the peers; a gone peer would make it wait forever,
  // so it is bounded and the communicator aborted past the bound.
  ncclResult_t rc = ncclCommFinalize(comm_);
  if (rc == ncclSuccess || rc == ncclInProgress) {
    rc = poll_state(comm_, Clock::now() + std::chrono::seconds(10));
  }
  if (rc == ncclSuccess) {
    ncclCommDestroy(comm_);
  } else {
    WEFT_LOG(Warn) << "NCCL gang " << who(member_, size_, device_)
                   << ": finalize did not complete (" << ncclGetErrorString(rc)
                   << "), aborting the communicator";
    ncclCommAbort(comm_);
  }
  comm_ = nullptr;
#endif
}

void NcclGang::abort() noexcept {
#if WEFT_HAVE_CUDA
  if (comm_) ncclCommAbort(comm_);
#endif
  comm_ = nullptr;
}

void NcclGang::wait_ready(milliseconds timeout) const {
  const auto t0 = Clock::now();
  if (!comm_) gang_fail("the gang has no communicator", member_, size_, device_, since(t0));
#if WEFT_HAVE_CUDA
  ncclResult_t state = poll_state(comm_, t0 + timeout);
  if (state == ncclInProgress) {
    gang_fail("NCCL operations still in progress after " + std::to_string(timeout.count()) +
                  " ms (a member may be gone; abort() the gang)",
              member_, size_, device_, since(t0));
  }
  if (state != ncclSuccess) {
    gang_fail("communicator error: " + nccl_text(state, comm_), member_, size_, device_, since(t0));
  }
#endif
}

void NcclGang::check(int nccl_result, std::string_view what, milliseconds timeout) const {
#if WEFT_HAVE_CUDA
  auto rc = static_cast<ncclResult_t>(nccl_result);
  if (rc == ncclSuccess) return;
  if (rc == ncclInProgress) {
    wait_ready(timeout);
    return;
  }
  gang_fail(std::string(what) + " failed: " + nccl_text(rc, comm_), member_, size_, device_,
            milliseconds(0));
#else
  gang_fail(std::string(what) + ": " + kNoCuda, member_, size_, device_, milliseconds(0));
#endif
}

}  // namespace weft::gpu
