// Who is where: the rank's node (after optional virtual-node splitting), the ranks that share
// it, and a job id common to all ranks. Computed once, collectively, at startup; the only MPI
// the transport uses besides its own constructor.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "common/config.hpp"

namespace weft::net {

struct Topology {
  int rank = 0, size = 1;
  int node = 0, num_nodes = 1;    // node index after virtual-node splitting
  std::vector<int> node_of_rank;  // size entries
  std::vector<int> host_of_rank;  // physical host (shared-memory domain) label, before splitting
  std::vector<std::string> host_names;  // each rank's hostname, for logs and errors
  std::vector<int> local_ranks;   // ranks on my node, ascending
  int local_index = 0;            // my position in local_ranks
  std::string job_id;             // same on every rank, unique per job (hex)

  bool same_node(int other) const { return node_of_rank[other] == node; }
  // "rank 2 on host h1" (the host is left out when unknown).
  std::string describe(int r) const;
};

// Collective over `world`. Nodes are the MPI_COMM_TYPE_SHARED groups; config `virtual_nodes`
// (WEFT_VIRTUAL_NODES=N, default 1) splits each of them into min(N, its ranks) contiguous blocks
// so cross-node paths run on one host. Nodes are numbered by their lowest rank. Throws
// ConfigError when virtual_nodes < 1.
Topology discover_topology(MPI_Comm world, const Config& cfg);

// The pure part, exposed for tests: given each rank's physical node (any labels, identical
// on all ranks), returns node_of_rank after splitting every physical node into `virtual_nodes`
// contiguous blocks.
std::vector<int> split_nodes(const std::vector<int>& physical_of_rank, int virtual_nodes);

}  // namespace weft::net
