// Placement-group infeasibility: a group that no state of the job could ever host is reported
// INFEASIBLE at once, with the reason, instead of waiting forever in PENDING.
#pragma once

#include <optional>

#include "sched/cluster_view.hpp"
#include "sched/feasibility.hpp"
#include "sched/placement_group.hpp"

namespace weft::sched {

// Checks, against totals (never against what is free now):
//  - every bundle fits some rank ("bundle 3 needs {GPU: 16}; the largest rank has GPU: 8"),
//    including custom resources nobody has;
//  - STRICT_PACK: all bundles fit the ranks of one node;
//  - STRICT_SPREAD: enough distinct nodes can host the bundles;
//  - NVLINK_DOMAIN: the sum fits one NVLink domain.
std::optional<Infeasibility> check_group_feasible(const PgSpec& spec, const ClusterView& view);

}  // namespace weft::sched
