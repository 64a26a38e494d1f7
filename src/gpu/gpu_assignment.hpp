// Which of a node's GPUs belong to which rank. Pure logic (no CUDA, no MPI): the runtime gathers
// every local rank's visible-device UUIDs (discover_gpus) over the node communicator and calls
// plan_rank_gpus; the result feeds the rank's "GPU" resource and cudaSetDevice.
//
// Two situations are told apart by the gathered views:
//  - every local rank sees the same devices (plain mpirun): the node's devices are split among
//    the local ranks, `gpus_per_rank` each when configured, else evenly;
//  - the views differ (the launcher bound GPUs, e.g. srun --gpus-per-task, or a per-rank
//    CUDA_VISIBLE_DEVICES wrapper): each rank keeps what it sees, and a device seen by k ranks
//    counts 1/k towards each.
#pragma once

#include <string>
#include <vector>

#include "common/config.hpp"

namespace weft::gpu {

struct RankGpus {
  std::vector<int> devices;  // CUDA ordinals in this rank's visible set, for cudaSetDevice
  double gpus = 0;           // the rank's "GPU" resource: may be fractional when ranks share
  std::string how;           // one line for logs: how the split was decided
};

// Even split of `num_devices` among `local_size` ranks (gpus_per_rank <= 0), or `gpus_per_rank`
// each. gpus_per_rank >= 1 must be whole; 0 < gpus_per_rank < 1 shares a device among
// 1/gpus_per_rank ranks. Throws ConfigError when the node has too few devices for the request.
RankGpus split_gpus(int num_devices, int local_rank, int local_size, double gpus_per_rank);

// The full decision from every local rank's visible UUIDs (index = local rank).
// `gpus_per_rank` comes from config key `gpus_per_rank` (unset: <= 0).
RankGpus plan_rank_gpus(const std::vector<std::vector<std::string>>& visible_uuids_by_local_rank,
                        int local_rank, double gpus_per_rank);

// What one rank reports at startup: its host and the UUIDs of the devices it sees.
struct RankGpuView {
  std::string host;
  std::vector<std::string> uuids;
  std::string to_bytes() const;  // one line per field, for the startup allgather
  static RankGpuView from_bytes(const std::string& bytes);
};

// plan_rank_gpus over the ranks that share `rank`'s host (every rank's view, index = world
// rank). Ranks of one host share its devices even when virtual nodes split the host.
RankGpus plan_host_gpus(const std::vector<RankGpuView>& views_by_rank, int rank,
                        double gpus_per_rank);

// Reads `gpus_per_rank` (absent: -1 = even split). Throws ConfigError on a negative value.
double gpus_per_rank_from(const Config& config);

}  // namespace weft::gpu
