// Failure detection for peers on this host. UCX reports a dead peer on another node, but the
// node-local path (rings in shared memory) reports nothing: a dead reader just stops consuming.
// Ranks of one host (the same MPI shared-memory domain, Topology::host_of_rank, and the same PID
// namespace, so a PID means the same process) learn each other's PIDs at bootstrap, and every
// `interval` the transport asks the kernel whether they still exist (kill(pid, 0): no signal).
// A vanished process is a failed peer, reported like a UCX failure. Costs one syscall per local
// peer per interval.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/topology.hpp"

namespace weft::net {

class HostLiveness {
 public:
  // Collective over `world`. `interval` 0 turns the checks off.
  HostLiveness(MPI_Comm world, const Topology& topo, std::chrono::milliseconds interval);

  // Peers found gone since the last call, with the reason; at most one scan per interval.
  std::vector<std::pair<int, std::string>> poll();
  size_t watched() const { return watched_.size(); }
  // Whether `rank`'s process on this host runs (it exists and is not stopped: /proc/<pid>/stat
  // is not in state T, t, Z or X); nullopt for a rank not on this host (or not watched).
  // A syscall per call: for the heartbeats' decision on a silent rank, not for hot paths.
  std::optional<bool> running(int rank) const;

 private:
  struct Watched {
    int rank;
    long pid;
  };
  std::vector<Watched> watched_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point next_;
  uint32_t calls_ = 0;
};

}  // namespace weft::net
