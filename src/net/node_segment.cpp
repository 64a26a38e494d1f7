#include "net/node_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/check.hpp"
#include "common/log.hpp"
#include "net/net_error.hpp"

namespace weft::net::detail {
namespace {

constexpr size_t kPage = 4096;
size_t round_page(size_t n) { return (n + kPage - 1) / kPage * kPage; }

// Owns a file descriptor only as long as mapping needs it.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

ShmMapping& ShmMapping::operator=(ShmMapping&& o) noexcept {
  if (this != &o) {
    if (addr_) ::munmap(addr_, len_);
    addr_ = o.addr_, len_ = o.len_;
    o.addr_ = nullptr;
  }
  return *this;
}

ShmMapping::~ShmMapping() {
  if (addr_) ::munmap(addr_, len_);
}

std::string NodeSegment::segment_name(const std::string& job_id, int node) {
  return "/weft-" + job_id + "-net-n" + std::to_string(node);
}

NodeSegment::NodeSegment(MPI_Comm world, const Topology& topo, size_t ring_capacity)
    : name_(segment_name(topo.job_id, topo.node)),
      local_count_(static_cast<int>(topo.local_ranks.size())),
      cap_(ring_capacity) {
  const size_t L = local_count_;
  slot_bytes_ = round_page(ring_slot_bytes(cap_));
  rings_offset_ = round_page(L * sizeof(Doorbell));
  const size_t total = rings_offset_ + L * L * slot_bytes_;
  const bool leader = topo.local_index == 0;
  const bool needed = L > 1;  // a rank alone on its node talks to nobody through shared memory

  // Phase 1: the node's first rank creates and sizes the object (ftruncate zero-fills it, which
  // is the initial state of every ring and doorbell).
  std::string err;
  if (needed && leader) {
    Fd fd(::shm_open(name_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600));
    if (fd.get() < 0) {
      err = "shm_open(" + name_ + ", O_CREAT) failed: " + std::strerror(errno);
    } else if (::ftruncate(fd.get(), static_cast<off_t>(total)) != 0) {
      err =
          "ftruncate(" + name_ + ", " + std::to_string(total) + ") failed: " + std::strerror(errno);
    } else {
      void* p = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
      if (p == MAP_FAILED)
        err = "mmap of " + name_ + " failed: " + std::strerror(errno);
      else
        map_ = ShmMapping(p, total);
    }
    if (!err.empty()) ::shm_unlink(name_.c_str());
  }
  int bad = err.empty() ? 0 : 1, any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, world);
  if (any_bad) {
    throw TransportError("rank " + std::to_string(topo.rank) +
                         ": node shared segment setup failed" +
                         (err.empty() ? " on another rank" : ": " + err) +
                         " (check /dev/shm space and permissions)");
  }
  // Phase 2: the others attach; then the leader unlinks so nothing outlives the job.
  if (needed && !leader) {
    Fd fd(::shm_open(name_.c_str(), O_RDWR, 0600));
    if (fd.get() < 0) {
      err = "shm_open(" + name_ + ") failed: " + std::strerror(errno);
    } else {
      void* p = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
      if (p == MAP_FAILED)
        err = "mmap of " + name_ + " failed: " + std::strerror(errno);
      else
        map_ = ShmMapping(p, total);
    }
  }
  bad = err.empty() ? 0 : 1;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, world);
  if (needed && leader) ::shm_unlink(name_.c_str());
  if (any_bad) {
    throw TransportError("rank " + std::to_string(topo.rank) +
                         ": attaching the node shared segment failed" +
                         (err.empty() ? " on another rank" : ": " + err));
  }
  WEFT_LOG(Debug) << "net: node segment " << name_ << " " << total << " bytes, " << L
                  << " local ranks";
}

Doorbell& NodeSegment::doorbell(int local) const {
  WEFT_CHECK(valid() && local >= 0 && local < local_count_) << "doorbell " << local;
  return reinterpret_cast<Doorbell*>(map_.data())[local];
}

RingControl* NodeSegment::ring(int from_local, int to_local) const {
  WEFT_CHECK(valid() && from_local >= 0 && from_local < local_count_ && to_local >= 0 &&
             to_local < local_count_)
      << "ring " << from_local << "->" << to_local;
  return reinterpret_cast<RingControl*>(
      map_.data() + rings_offset_ + (size_t(from_local) * local_count_ + to_local) * slot_bytes_);
}

}  // namespace weft::net::detail
