// The node's shared segment: one POSIX shared-memory object per node holding a doorbell per
// local rank and one SPSC ring per ordered pair of local ranks. Created by the node's first
// rank, attached by the others, then unlinked at once so that a crash leaks nothing in /dev/shm;
// the mapping stays valid until every rank unmaps it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

#include "common/shm_mapping.hpp"
#include "net/doorbell.hpp"
#include "net/shm_ring.hpp"
#include "net/topology.hpp"

namespace weft::net::detail {

class NodeSegment {
 public:
  NodeSegment() = default;
  // Collective over `world`. `ring_capacity`: a power of two. Throws TransportError on every
  // rank if any rank of any node failed to create or attach its segment.
  NodeSegment(MPI_Comm world, const Topology& topo, size_t ring_capacity);

  bool valid() const { return map_.data() != nullptr; }
  size_t ring_capacity() const { return cap_; }
  // Local indices (positions in Topology::local_ranks).
  Doorbell& doorbell(int local) const;
  RingControl* ring(int from_local, int to_local) const;
  const std::string& name() const { return name_; }

  static std::string segment_name(const std::string& job_id, int node);

 private:
  Mapping map_;
  std::string name_;
  int local_count_ = 0;
  size_t cap_ = 0;
  size_t slot_bytes_ = 0;
  size_t rings_offset_ = 0;
};

}  // namespace weft::net::detail
