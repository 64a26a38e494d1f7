// Where this rank's ready tasks run, as protocol state without I/O: the submitter's slot view
// (every rank's total minus what this submitter has running or queued there), the count of its
// tasks out at each rank, and the long-lived reservations of placement groups it follows. The
// event loop asks it for a rank per task and tells it when a task ends, moves (stolen) or is
// retried (src/core/submitter.cpp, task_retry.cpp, pg_client.cpp); unit tests drive it directly
// (tests/unit/core/task_placer_test.cpp).
//
// A slot free in the view goes to sched::pick_rank's choice (the strategy's), and the task holds
// it until it ends. When every allowed rank is full, the task goes to the rank with the fewest of
// this submitter's tasks out per CPU, results not yet read included, and waits in that rank's
// gate, where an idle rank may steal it. It is never held here: holding could deadlock nested
// tasks, whose parents hold the slots. So each rank's share follows how fast it finishes work
// (docs/architecture.md, "What per-rank task counts follow").
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/exec_item.hpp"
#include "core/failed_ranks.hpp"
#include "core/once_per_node.hpp"
#include "sched/cluster_view.hpp"
#include "sched/resource_set.hpp"

namespace weft::core {

class TaskPlacer {
 public:
  // `view`: every rank's true totals and the topology; it must outlive the placer.
  TaskPlacer(const sched::ClusterView& view, int rank);

  struct Placed {
    int rank = -1;          // -1: it can run nowhere, `why` says why
    bool reserved = false;  // it holds a slot of the view until finished() or moved()
    std::string why;        // the InfeasibleError's reason
    std::string fallback;   // a soft affinity runs elsewhere: the line to log (once per node)
  };
  // A ready task outside placement groups: first whether any rank could ever run it (a hard
  // affinity's node first), then where it runs now. Counted at that rank.
  // `arg_bytes_by_rank`: holders of its stored ref arguments (locality), or empty.
  Placed place(const sched::ResourceSet& need, const Strategy& st,
               std::vector<std::pair<int, uint64_t>> arg_bytes_by_rank, const FailedRanks& failed);
  // A task whose rank was chosen elsewhere (a placement-group bundle's): counted there.
  void place_at(int rank) { ++load_[rank]; }
  // The rank to run a task when no slot is counted for it: the least loaded live rank that can
  // ever run it, preferring ranks where it fits beside the reservations; `avoid` only when no
  // other rank can. -1 when every such rank has failed. Counts nothing (see moved()).
  int overflow_rank(const sched::ResourceSet& need, const Strategy& st, const FailedRanks& failed,
                    int avoid = -1) const;
  // The task counted at `from` runs at `to` now. Stolen (`take_free_slot`): it holds a slot of
  // `to` if one is free; retried: never (the retry's rank was chosen without one).
  void moved(int from, int to, const sched::ResourceSet& need, bool* reserved, bool take_free_slot);
  // The task's result (or final error) arrived.
  void finished(int rank, const sched::ResourceSet& need, bool reserved);
  // A created group's bundle is held at `rank` for its lifetime, and given back when it goes.
  void hold_bundle(int rank, const sched::ResourceSet& bundle);
  void free_bundle(int rank, const sched::ResourceSet& bundle);

  // Why a hard node affinity can never be met (no such node, or none of its ranks could ever
  // fit the request), or nothing.
  std::optional<std::string> affinity_infeasible(const sched::ResourceSet& need,
                                                 const Strategy& st) const;
  // This submitter's tasks out at `rank` (running, queued, or with results not yet read).
  int64_t load(int rank) const { return load_[rank]; }
  const sched::ClusterView& slot_view() const { return slots_; }

 private:
  int least_loaded_fit(const sched::ResourceSet& need, const Strategy& st,
                       const FailedRanks& failed, int skip) const;
  std::string fallback_note(const Strategy& st, int target);

  const sched::ClusterView& view_;
  const int rank_, size_;
  sched::ClusterView slots_;   // totals minus what this submitter has running or queued out
  std::vector<int64_t> load_;  // this submitter's tasks out per rank
  // Long-lived reservations this rank knows of (bundles of groups it follows): a task must fit
  // beside them, not merely in the rank's total, or it would wait at its target for ever.
  std::vector<sched::ResourceSet> reserved_;
  // The last request shape found feasible: feasibility reads only the ranks' totals, which never
  // change, so a stream of tasks of one shape is checked once, not once per task.
  std::optional<sched::ResourceSet> feasible_need_;
  OncePerNode fallback_logged_;  // a soft affinity's fallback was logged for the node
};

}  // namespace weft::core
