#include "sched/feasibility.hpp"

#include <algorithm>
#include <vector>

namespace weft::sched {
namespace {

std::string amount(int64_t u) { return ResourceSet::format_units(u); }

Infeasibility make(const std::string& res, int64_t req, int64_t best, std::string msg) {
  return Infeasibility{res, ResourceSet::to_double(req), ResourceSet::to_double(best),
                       std::move(msg)};
}

// Against the ranks in `ranks` (representatives or one node's ranks): nullopt if one fits,
// else the failure of the rank that misses the fewest resources.
std::optional<Infeasibility> check_ranks(const ResourceSet& need, const ClusterView& view,
                                         const std::vector<int>& ranks, const std::string& where) {
  const int C = view.columns();
  std::vector<int64_t> d(C);
  for (const auto& [name, u] : need) {
    if (u > 0 && view.column(name) < 0 && name == "GPU") {
      // Not a resource to declare by hand: a GPU is a device every rank looks for at start-up.
      return make(name, u, 0,
                  "The request " + need.str() + " needs a GPU, but no CUDA device was detected " +
                      "on any rank of this job. Each rank lists the CUDA devices it sees at " +
                      "start-up (CUDA_VISIBLE_DEVICES applies; a Weft built without CUDA sees " +
                      "none), and the ranks of a host share them (gpus_per_rank): run the job " +
                      "on GPU nodes (e.g. srun --gpus-per-task=1), or remove num_gpus from the " +
                      "request.");
    }
    if (u > 0 && view.column(name) < 0) {
      return make(name, u, 0,
                  "The request " + need.str() + " needs resource '" + name.str() +
                      "', which no rank of this job has; declare it (e.g. --weft-resources=\"" +
                      name.str() + "=" + amount(u) + "\") or remove it from the request.");
    }
  }
  view.to_dense(need, d.data());
  // The closest rank: fewest missing resources, then the most of them (as fractions of the
  // demand), so the message points at the shortfall a user can most plausibly fix.
  int best_rank = -1, best_missing = C + 1, first_missing_col = -1;
  double best_cover = -1;
  for (int r : ranks) {
    const int64_t* t = view.total_dense(r);
    int missing = 0, first = -1;
    double cover = 0;
    for (int c = 0; c < C; ++c) {
      if (d[c] > t[c]) {
        ++missing;
        cover += double(t[c]) / double(d[c]);
        if (first < 0) first = c;
      }
    }
    if (missing == 0) return std::nullopt;
    if (missing < best_missing || (missing == best_missing && cover > best_cover)) {
      best_missing = missing, best_rank = r, first_missing_col = first, best_cover = cover;
    }
  }
  if (best_rank < 0) return make("", 0, 0, "The request " + need.str() + " has no rank to run on.");
  int c = first_missing_col;
  const std::string& name = view.column_name(c);
  int64_t most = view.max_rank_total(c);
  if (d[c] > most) {
    return make(name, d[c], most,
                "The request " + need.str() + " needs " + name + ": " + amount(d[c]) +
                    " on one rank, but the largest " + where + " has " + name + ": " +
                    amount(most) + "; it can never be scheduled on this job.");
  }
  int64_t have = view.total_dense(best_rank)[c];
  return make(name, d[c], have,
              "The request " + need.str() + " fits no single " + where + ": ranks with enough " +
                  "of the other resources have at most " + name + ": " + amount(have) +
                  " (e.g. rank " + std::to_string(best_rank) + " has " +
                  view.info(best_rank).total.str() + ").");
}

}  // namespace

std::optional<Infeasibility> check_feasible(const ResourceSet& need, const ClusterView& view) {
  return check_ranks(need, view, view.rank_shapes(), "rank");
}

std::optional<Infeasibility> check_feasible_on_node(const ResourceSet& need,
                                                    const ClusterView& view, int node_id) {
  int n = view.node_index(node_id);
  if (n < 0) {
    return make("", 0, 0,
                "Node affinity names node " + std::to_string(node_id) + ", which this job does " +
                    "not have (nodes 0.." + std::to_string(view.num_nodes() - 1) + ").");
  }
  auto why = check_ranks(need, view, view.node_ranks(n), "rank of node " + std::to_string(node_id));
  if (why)
    why->message = "Hard node affinity to node " + std::to_string(node_id) + ": " + why->message;
  return why;
}

std::optional<Infeasibility> check_fits_bundle(const ResourceSet& need,
                                               const std::vector<ResourceSet>& bundles,
                                               int bundle_index) {
  std::string sizes;
  for (size_t i = 0; i < bundles.size(); ++i) {
    sizes += (i ? ", " : "") + std::to_string(i) + ": " + bundles[i].str();
  }
  if (bundle_index >= static_cast<int>(bundles.size())) {
    return make("", 0, 0,
                "bundle_index " + std::to_string(bundle_index) + " is out of range: the " +
                    "placement group has " + std::to_string(bundles.size()) + " bundles (" + sizes +
                    ").");
  }
  auto check_one = [&](const ResourceSet& b) { return need.fits_in(b); };
  if (bundle_index >= 0 ? check_one(bundles[bundle_index])
                        : std::any_of(bundles.begin(), bundles.end(), check_one)) {
    return std::nullopt;
  }
  // Name the first resource the (largest) target bundle lacks.
  const ResourceSet& b = bundle_index >= 0 ? bundles[bundle_index] : bundles.front();
  std::string res;
  int64_t req = 0, have = 0;
  for (const auto& [name, u] : need) {
    int64_t most = 0;
    if (bundle_index >= 0) {
      most = b.units(name);
    } else {
      for (const auto& x : bundles) most = std::max(most, x.units(name));
    }
    if (u > most) {
      res = name, req = u, have = most;
      break;
    }
  }
  if (res.empty()) {  // each resource fits some bundle, but no bundle has all of them
    return make("", 0, 0,
                "The request " + need.str() + " does not fit any single bundle of its placement "
                "group (bundles: " + sizes + "). Ask for less, or create the group with larger "
                "bundles.");
  }
  std::string target = bundle_index >= 0 ? "bundle " + std::to_string(bundle_index) : "any bundle";
  return make(res, req, have,
              "The request " + need.str() + " does not fit " + target +
                  " of its placement group: it needs " + res + ": " + amount(req) +
                  " and the bundles offer at most " + amount(have) + " (bundles: " + sizes +
                  "). Ask for less, or create the group with larger bundles.");
}

}  // namespace weft::sched
