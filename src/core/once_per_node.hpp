// "Logged once per node" for placement fallbacks (task_placer.cpp, actor_placer.cpp): true the
// first time a node is named, by its dense index, or by its id when the job has no such node.
#pragma once

#include <set>
#include <utility>
#include <vector>

namespace weft::core {

class OncePerNode {
 public:
  explicit OncePerNode(int num_nodes) : seen_(num_nodes, 0) {}
  // `node`: the dense index of `node_id`, or -1 when the job does not have it.
  bool first(int node_id, int node) {
    return node >= 0 ? !std::exchange(seen_[node], 1) : unknown_.insert(node_id).second;
  }

 private:
  std::vector<char> seen_;
  std::set<int> unknown_;
};

}  // namespace weft::core
