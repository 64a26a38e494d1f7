// Cluster views, strategies and checks shared by the placement tests (task_placer_test.cpp,
// actor_placer_test.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/exec_item.hpp"
#include "sched/cluster_view.hpp"

namespace weft::core::testing {

// `nodes` × `per_node` ranks, numbered node by node; rank r's total is `total(r)`.
inline sched::ClusterView cluster_of(int nodes, int per_node,
                                     const std::function<sched::ResourceSet(int)>& total) {
  std::vector<sched::RankInfo> ranks;
  for (int n = 0; n < nodes; ++n) {
    for (int i = 0; i < per_node; ++i) {
      sched::RankInfo r;
      r.rank = static_cast<int>(ranks.size());
      r.node = n;
      r.total = total(r.rank);
      ranks.push_back(r);
    }
  }
  return sched::ClusterView(ranks);
}

inline Strategy affinity(int node, bool soft) {
  return Strategy{.policy = sched::Policy::kNodeAffinity, .node = node, .soft = soft};
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace weft::core::testing
