// The placement-group planner: given a group and the head's ClusterView, where should each bundle
// go — or why not now (PENDING) or never (INFEASIBLE). Planning is pure and leaves the view as it
// found it; the head then runs the two-phase reservation (pg_ledger) on the ranks of the plan and,
// once every rank committed, allocates the bundles in its view.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/cluster_view.hpp"
#include "sched/feasibility.hpp"
#include "sched/placement_group.hpp"

namespace weft::sched {

struct PgPlan {
  enum class Outcome { kPlaced, kPending, kInfeasible };
  Outcome outcome = Outcome::kPending;
  std::vector<int> ranks;                      // bundle → rank, when placed
  std::string reason;                          // when pending or infeasible: a sentence for users
  std::optional<Infeasibility> infeasibility;  // the structured reason, when infeasible

  bool placed() const { return outcome == Outcome::kPlaced; }
  // Distinct nodes the plan uses.
  int nodes_used(const ClusterView& view) const;
};

// PACK: consecutive bundles on the same node; a node that can hold all remaining bundles first.
// SPREAD: a different node per bundle where possible, else anywhere.
// STRICT_PACK: all bundles on one node. STRICT_SPREAD: all on distinct nodes.
// NVLINK_DOMAIN: all bundles inside one NVLink domain, on as few nodes as possible.
// `view` is used as scratch (tentative allocations) and restored before returning.
PgPlan plan_placement_group(const PgSpec& spec, ClusterView& view);

// The query result for a created group: bundle → rank → node → GPU ids → domain. `gpu_ids[b]`
// are the device ids rank `ranks[b]` returned from prepare.
std::vector<BundleLocation> locate_bundles(const PgPlan& plan, const ClusterView& view,
                                           const std::vector<std::vector<int>>& gpu_ids);

}  // namespace weft::sched
