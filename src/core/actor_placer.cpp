#include "core/actor_placer.hpp"

namespace weft::core {

ActorPlacer::ActorPlacer(const sched::ClusterView& view, int rank)
    : view_(view), rank_(rank), placed_(view.size(), 0), fallback_logged_(view.num_nodes()) {}

int ActorPlacer::fewest(const sched::ResourceSet& need, int node, const FailedRanks& failed) const {
  const int size = view_.size();
  int best = -1;
  for (int i = 0; i < size; ++i) {
    const int r = (rank_ + i) % size;
    if (node >= 0 && view_.node_of(r) != node) continue;
    if (failed.contains(r) || !need.fits_in(view_.info(r).total)) continue;
    if (best < 0 || placed_[r] < placed_[best]) best = r;
  }
  return best;
}

ActorPlacer::Placed ActorPlacer::place(const sched::ResourceSet& need, const Strategy& st,
                                       const FailedRanks& failed) {
  Placed out;
  const bool affinity = st.policy == sched::Policy::kNodeAffinity;
  const int node = affinity ? view_.node_index(st.node) : -1;
  int best = node >= 0 ? fewest(need, node, failed) : -1;
  if (affinity && best < 0) {
    if (!st.soft) {
      out.why = node < 0 ? "it asks for node " + std::to_string(st.node) +
                               ", which this job does not have"
                         : "every rank of node " + std::to_string(st.node) +
                               " that could host it (" + need.str() + ") has failed";
      return out;
    }
    best = fewest(need, -1, failed);
    if (best >= 0) out.fallback = fallback_note(st.node, node, best);
  } else if (!affinity) {
    best = fewest(need, -1, failed);
  }
  if (best < 0) {
    out.why = "every rank that could host it (" + need.str() + ") has failed";
    return out;
  }
  out.rank = best;
  ++placed_[best];
  return out;
}

std::string ActorPlacer::fallback_note(int node_id, int node, int target) {
  if (!fallback_logged_.first(node_id, node)) return {};
  return "node " + std::to_string(node_id) +
         (node < 0 ? ", which this job does not have" : ", which cannot host it") +
         "; placed on rank " + std::to_string(target) + " of node " +
         std::to_string(view_.info(target).node) + " (logged once per node)";
}

}  // namespace weft::core
