// Where this rank's actors are created, as logic without I/O: an actor holds its rank for its
// lifetime, so DEFAULT and SPREAD alike spread actors, to the live rank that can host it with the
// fewest actors this creator placed there (nearest rank first among equals, so a one-rank job and
// the creator's own rank come naturally). A node affinity limits the ranks to that node's: a hard
// one fails when none of them is left, a soft one falls back to every rank and says so once per
// node. The event loop places first creations (submitter.cpp) and restarts (actor_restarts.cpp)
// with it; unit tests drive it directly (tests/unit/core/actor_placer_test.cpp).
#pragma once

#include <string>
#include <vector>

#include "core/exec_item.hpp"
#include "core/failed_ranks.hpp"
#include "core/once_per_node.hpp"
#include "sched/cluster_view.hpp"
#include "sched/resource_set.hpp"

namespace weft::core {

class ActorPlacer {
 public:
  // `view`: every rank's total and the topology; it must outlive the placer.
  ActorPlacer(const sched::ClusterView& view, int rank);

  struct Placed {
    int rank = -1;         // -1: no live rank can host it, `why` says why
    std::string why;       // the error's reason
    std::string fallback;  // a soft affinity's node could not host it: what to log (once a node)
  };
  // Counted at the rank chosen.
  Placed place(const sched::ResourceSet& need, const Strategy& st, const FailedRanks& failed);
  // An actor placed elsewhere (a placement-group bundle's rank) counts too; one whose creation
  // was refused (its name was taken) no longer does.
  void count(int rank) { ++placed_[rank]; }
  void uncount(int rank) { --placed_[rank]; }
  int placed(int rank) const { return placed_[rank]; }

 private:
  // The live rank (of `node`, unless -1) that can host `need` with the fewest actors; -1: none.
  int fewest(const sched::ResourceSet& need, int node, const FailedRanks& failed) const;
  std::string fallback_note(int node_id, int node, int target);

  const sched::ClusterView& view_;
  const int rank_;
  std::vector<int> placed_;      // per rank: actors this creator placed there
  OncePerNode fallback_logged_;  // a soft affinity's fallback was logged for the node
};

}  // namespace weft::core
