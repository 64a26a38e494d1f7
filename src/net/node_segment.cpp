#include "net/node_segment.hpp"

#include "common/check.hpp"
#include "common/log.hpp"
#include "net/net_error.hpp"

namespace weft::net::detail {
namespace {

constexpr size_t kPage = 4096;
size_t round_page(size_t n) { return (n + kPage - 1) / kPage * kPage; }

}  // namespace

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
  // Errors are collected, not thrown, so that every rank reaches the collective below.
  std::string err;
  if (needed && leader) {
    try {
      map_ = shm_create(name_, total);
    } catch (const Error& e) {
      err = e.what();
    }
  }
  int bad = err.empty() ? 0 : 1, any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, world);
  if (any_bad) {
    throw TransportError("rank " + std::to_string(topo.rank) +
                         ": node shared segment setup failed" +
                         (err.empty() ? " on another rank" : ": " + err));
  }
  // Phase 2: the others attach; then the leader unlinks so nothing outlives the job.
  if (needed && !leader) {
    try {
      map_ = shm_attach(name_, total);
    } catch (const Error& e) {
      err = e.what();
    }
  }
  bad = err.empty() ? 0 : 1;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, world);
  if (needed && leader) shm_remove(name_);
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
