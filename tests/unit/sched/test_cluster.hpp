// Builds ClusterViews of a given shape for the sched tests.
#pragma once

#include <vector>

#include "sched/cluster_view.hpp"

namespace weft::sched::testing {

// `nodes` nodes of `ranks_per_node` ranks, each rank with `per_rank` (its GPU count gives it that
// many device ids), `nodes_per_domain` consecutive nodes per NVLink domain.
inline std::vector<RankInfo> make_ranks(int nodes, int ranks_per_node, const ResourceSet& per_rank,
                                        int nodes_per_domain = 1) {
  std::vector<RankInfo> out;
  int gpus = static_cast<int>(per_rank.get("GPU") + 0.9999);
  for (int n = 0; n < nodes; ++n) {
    for (int i = 0; i < ranks_per_node; ++i) {
      RankInfo r;
      r.rank = static_cast<int>(out.size());
      r.node = n;
      r.nvlink_domain = n / nodes_per_domain;
      r.total = per_rank;
      for (int g = 0; g < gpus; ++g) r.gpu_ids.push_back(i * gpus + g);
      out.push_back(r);
    }
  }
  return out;
}

inline ClusterView make_cluster(int nodes, int ranks_per_node, const ResourceSet& per_rank,
                                int nodes_per_domain = 1) {
  return ClusterView(make_ranks(nodes, ranks_per_node, per_rank, nodes_per_domain));
}

}  // namespace weft::sched::testing
