// This rank's GPUs at startup: the devices the CUDA runtime shows it (CUDA_VISIBLE_DEVICES
// applies), split among the ranks of its host (src/gpu/gpu_assignment.hpp). The result becomes
// the rank's "GPU" resource and the device ids that bundles and tasks are given, so
// weft::assigned_gpus() and PlacementGroup::bundles() name devices cudaSetDevice accepts.
#pragma once

#include <vector>

#include "common/config.hpp"
#include "gpu/gpu_assignment.hpp"
#include "net/topology.hpp"
#include "sched/cluster_view.hpp"
#include "sched/resource_set.hpp"

namespace weft::core {

// Collective over MPI_COMM_WORLD: every rank's host and visible devices are gathered, then this
// rank's share is planned. A host without GPUs (or a build without CUDA) gives 0 GPUs, no error;
// a `gpus_per_rank` the host cannot satisfy throws ConfigError.
gpu::RankGpus plan_local_gpus(const Config& cfg, const net::Topology& topo);

// Adds the planned GPUs to this rank's resources unless `resources` (WEFT_RESOURCES) sets "GPU"
// itself: then that amount stands and the ids are logical (0..n-1).
void add_local_gpus(const Config& cfg, int rank, const gpu::RankGpus& gpus, sched::ResourceSet& r);

// After the resources were gathered: this rank's device ids, when they came from discovery.
void set_local_gpu_ids(const Config& cfg, int rank, const gpu::RankGpus& gpus,
                       std::vector<sched::RankInfo>& ranks);

}  // namespace weft::core
