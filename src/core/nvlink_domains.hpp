// Every rank's NVLink domain, agreed at startup: each rank resolves its node's domain name
// (src/gpu: config `nvlink_domain`, `topology_file`, NVML fabric, else the node itself), the
// names are gathered, and equal names get the same small integer in RankInfo::nvlink_domain.
#pragma once

#include <vector>

#include "common/config.hpp"
#include "net/topology.hpp"
#include "sched/cluster_view.hpp"

namespace weft::core {

// Collective over MPI_COMM_WORLD. Domain ids are numbered by first appearance in rank order.
void assign_nvlink_domains(const Config& cfg, const net::Topology& topo,
                           std::vector<sched::RankInfo>& ranks);

}  // namespace weft::core
