// Feasibility: can a request *ever* run on this job, whatever else finishes? A batch allocation
// has no autoscaler, so a request that fits no rank is an error to report at once, naming the
// missing resource (Ray stays silent here; Weft must not). "Not now" is a different answer
// (pending) and belongs to the policies and the planner.
#pragma once

#include <optional>
#include <string>

#include "sched/cluster_view.hpp"
#include "sched/resource_set.hpp"

namespace weft::sched {

// Why a request can never run: the first missing resource, the amount asked, the most any rank
// (or node, for STRICT_PACK) has; `message` is a complete sentence for users.
struct Infeasibility {
  std::string resource;
  double requested = 0;
  double best_available = 0;
  std::string message;
};

// Against every rank's total (not what is free now). Tests one rank per distinct shape.
std::optional<Infeasibility> check_feasible(const ResourceSet& need, const ClusterView& view);

// Hard node affinity: can the node (by id) ever host `need` on one of its ranks?
std::optional<Infeasibility> check_feasible_on_node(const ResourceSet& need,
                                                    const ClusterView& view, int node_id);

// A task or actor targeting a placement group runs inside a bundle: does its demand fit the
// bundle it names (bundle_index ≥ 0), or any bundle (-1)? The message lists the bundle sizes.
std::optional<Infeasibility> check_fits_bundle(const ResourceSet& need,
                                               const std::vector<ResourceSet>& bundles,
                                               int bundle_index);

}  // namespace weft::sched
