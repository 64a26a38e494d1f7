#include "sched/pg_planner.hpp"

#include <algorithm>
#include <limits>

#include "sched/pg_feasibility.hpp"

namespace weft::sched {
namespace {

std::string amount(int64_t u) { return ResourceSet::format_units(u); }

class Planner {
 public:
  Planner(const PgSpec& spec, ClusterView& view)
      : spec_(spec), view_(view), C_(view.columns()), nb_(static_cast<int>(spec.bundles.size())) {
    need_.assign(size_t(nb_) * (C_ + 1), 0);  // + headroom column, always 0
    sum_.assign(C_, 0);
    for (int b = 0; b < nb_; ++b) {
      view.to_dense(spec.bundles[b], need(b));
      for (int c = 0; c < C_; ++c) sum_[c] += need(b)[c];
    }
    ranks_.assign(nb_, -1);
  }
  ~Planner() { undo_to(0); }

  PgPlan run() {
    PgPlan plan;
    std::string why;
    switch (spec_.strategy) {
      case Strategy::kPack:
        why = pack();
        break;
      case Strategy::kSpread:
        why = spread(false);
        break;
      case Strategy::kStrictSpread:
        why = spread(true);
        break;
      case Strategy::kStrictPack:
        why = strict_pack();
        break;
      case Strategy::kNvlinkDomain:
        why = nvlink_domain();
        break;
    }
    if (why.empty()) {
      plan.outcome = PgPlan::Outcome::kPlaced;
      plan.ranks = ranks_;
    } else {
      plan.outcome = PgPlan::Outcome::kPending;
      plan.reason = std::move(why);
    }
    return plan;
  }

 private:
  int64_t* need(int b) { return &need_[size_t(b) * (C_ + 1)]; }

  bool rank_fits(int r, int b) {
    const int64_t* a = view_.avail_dense(r);
    const int64_t* n = need(b);
    for (int c = 0; c < C_; ++c) {
      if (n[c] > a[c]) return false;
    }
    return true;
  }
  int try_node(int b, int node) {
    for (int r : view_.node_ranks(node)) {
      if (rank_fits(r, b)) return r;
    }
    return -1;
  }
  void place(int b, int r) {
    view_.allocate(r, spec_.bundles[b]);
    ranks_[b] = r;
    placed_.push_back(b);
  }
  void undo_to(size_t mark) {
    while (placed_.size() > mark) {
      int b = placed_.back();
      placed_.pop_back();
      view_.release(ranks_[b], spec_.bundles[b]);
      ranks_[b] = -1;
    }
  }

  // "bundle 3 needs {GPU: 8}; free now at most GPU: 4 on node 2 (rank 17)".
  std::string bundle_pending(int b, const std::string& extra = "") {
    std::string s = "bundle " + std::to_string(b) + " needs " + spec_.bundles[b].str() + extra;
    const int64_t* root = view_.rank_index().root();
    for (int c = 0; c < C_; ++c) {
      if (need(b)[c] > root[c]) {
        int r = view_.rank_index().argmax(c);
        return s + "; free now at most " + view_.column_name(c) + ": " + amount(root[c]) +
               " on node " + std::to_string(view_.info(r).node) + " (rank " + std::to_string(r) +
               ")";
      }
    }
    return s + "; no rank has all of it free at once";
  }
  // For whole-group demands: the first column where the best node (or domain) falls short.
  std::string group_pending(const std::string& head, const std::vector<int64_t>& best,
                            const std::string& where) {
    for (int c = 0; c < C_; ++c) {
      if (sum_[c] > best[c]) {
        return head + "; free now at most " + view_.column_name(c) + ": " + amount(best[c]) + " " +
               where;
      }
    }
    return head + "; the free resources are split across ranks so the bundles do not fit";
  }

  std::string pack() {
    // Suffix sums: what bundles b..end need together, to look for a node that takes them all.
    std::vector<int64_t> rest(size_t(nb_ + 1) * C_, 0);
    for (int b = nb_ - 1; b >= 0; --b) {
      for (int c = 0; c < C_; ++c)
        rest[size_t(b) * C_ + c] = rest[size_t(b + 1) * C_ + c] + need(b)[c];
    }
    int prev = -1;
    for (int b = 0; b < nb_; ++b) {
      int r = prev >= 0 ? try_node(b, prev) : -1;
      if (r < 0) {
        int n = view_.node_index().find_first(&rest[size_t(b) * C_], 0, view_.num_nodes());
        if (n >= 0) r = try_node(b, n);
      }
      if (r < 0) r = view_.rank_index().find_first(need(b), 0, view_.size());
      if (r < 0) return "PACK: " + bundle_pending(b);
      place(b, r);
      prev = view_.node_of(r);
    }
    return "";
  }

  // A fitting rank on a node this group does not use yet, in circular order from `start`.
  int on_unused_node(int b, int start, const std::vector<int>& used) {
    const FitIndex& idx = view_.rank_index();
    for (auto [lo, hi] : {std::pair{start, view_.size()}, std::pair{0, start}}) {
      for (int p = lo;;) {
        int r = idx.find_first(need(b), p, hi);
        if (r < 0) break;
        if (std::find(used.begin(), used.end(), view_.node_of(r)) == used.end()) return r;
        p = r + 1;
      }
    }
    return -1;
  }

  std::string spread(bool strict) {
    std::vector<int> used;
    int pos = 0;
    for (int b = 0; b < nb_; ++b) {
      int r = on_unused_node(b, pos, used);
      if (r < 0 && strict) {
        return "STRICT_SPREAD: " +
               bundle_pending(b, " on a node other than the " + std::to_string(used.size()) +
                                     " its earlier bundles use");
      }
      if (r < 0) r = view_.rank_index().find_first(need(b), 0, view_.size());
      if (r < 0) return "SPREAD: " + bundle_pending(b);
      place(b, r);
      used.push_back(view_.node_of(r));
      pos = (r + 1) % std::max(view_.size(), 1);
    }
    return "";
  }

  bool fill_nodes(const std::vector<int>& nodes, int* nodes_used) {
    std::vector<char> touched(nodes.size(), 0);
    for (int b = 0; b < nb_; ++b) {
      int r = -1;
      for (size_t i = 0; i < nodes.size() && r < 0; ++i) {
        r = try_node(b, nodes[i]);
        if (r >= 0) touched[i] = 1;
      }
      if (r < 0) return false;
      place(b, r);
    }
    *nodes_used = static_cast<int>(std::count(touched.begin(), touched.end(), 1));
    return true;
  }

  std::string strict_pack() {
    const FitIndex& nodes = view_.node_index();
    for (int p = 0;;) {
      int n = nodes.find_first(sum_.data(), p, view_.num_nodes());
      if (n < 0) break;
      int used = 0;
      if (fill_nodes({n}, &used)) return "";
      undo_to(0);
      p = n + 1;
    }
    ResourceSet total = view_.from_dense(sum_.data());
    std::vector<int64_t> best(nodes.root(), nodes.root() + C_);
    int c0 = 0;
    while (c0 < C_ && sum_[c0] <= best[c0]) ++c0;
    int n = nodes.argmax(c0 < C_ ? c0 : 0);
    return group_pending("STRICT_PACK needs " + total.str() + " on one node", best,
                         "on node " + std::to_string(view_.node_id(n)));
  }

  std::string nvlink_domain() {
    // The column that decides node counts: the largest demand relative to a node's size.
    int primary = 0;
    double most = -1;
    for (int c = 0; c < C_; ++c) {
      double f = double(sum_[c]) / double(std::max<int64_t>(view_.max_node_total(c), 1));
      if (f > most) most = f, primary = c;
    }
    struct Cand {
      int lower_bound, domain;
    };
    std::vector<Cand> cands;
    std::vector<int64_t> agg(C_), best_free(C_, 0), col;
    int best_free_domain = 0;
    for (int d = 0; d < view_.num_domains(); ++d) {
      const auto& nodes = view_.domain_nodes(d);
      std::fill(agg.begin(), agg.end(), 0);
      for (int n : nodes) {
        const int64_t* a = view_.node_avail_dense(n);
        for (int c = 0; c < C_; ++c) agg[c] += a[c];
      }
      if (agg[primary] > best_free[primary]) best_free = agg, best_free_domain = d;
      bool covers = true;
      for (int c = 0; c < C_ && covers; ++c) covers = agg[c] >= sum_[c];
      if (!covers) continue;
      // Lower bound on nodes: the fewest of its nodes whose free amounts could add up to the sum.
      int lb = 1;
      for (int c = 0; c < C_; ++c) {
        if (sum_[c] == 0) continue;
        col.clear();
        for (int n : nodes) col.push_back(view_.node_avail_dense(n)[c]);
        std::sort(col.begin(), col.end(), std::greater<>());
        int64_t acc = 0;
        int k = 0;
        while (acc < sum_[c]) acc += col[k++];
        lb = std::max(lb, k);
      }
      cands.push_back({lb, d});
    }
    std::stable_sort(cands.begin(), cands.end(),
                     [](const Cand& a, const Cand& b) { return a.lower_bound < b.lower_bound; });
    int best_nodes = std::numeric_limits<int>::max();
    std::vector<int> best_ranks;
    for (const Cand& cand : cands) {
      if (cand.lower_bound >= best_nodes) break;  // no later domain can beat the best found
      std::vector<int> nodes = view_.domain_nodes(cand.domain);
      std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) {
        return view_.node_avail_dense(a)[primary] > view_.node_avail_dense(b)[primary];
      });
      int used = 0;
      if (fill_nodes(nodes, &used) && used < best_nodes) best_nodes = used, best_ranks = ranks_;
      undo_to(0);
    }
    if (!best_ranks.empty()) {
      ranks_ = std::move(best_ranks);  // nothing stays tentatively allocated
      return "";
    }
    return group_pending(
        "NVLINK_DOMAIN needs " + view_.from_dense(sum_.data()).str() + " inside one NVLink domain",
        best_free, "in NVLink domain " + std::to_string(view_.domain_id(best_free_domain)));
  }

  const PgSpec& spec_;
  ClusterView& view_;
  const int C_, nb_;
  std::vector<int64_t> need_, sum_;
  std::vector<int> ranks_, placed_;
};

}  // namespace

int PgPlan::nodes_used(const ClusterView& view) const {
  std::vector<int> nodes;
  for (int r : ranks) nodes.push_back(view.node_of(r));
  std::sort(nodes.begin(), nodes.end());
  return static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

PgPlan plan_placement_group(const PgSpec& spec, ClusterView& view) {
  if (auto why = check_group_feasible(spec, view)) {
    PgPlan plan;
    plan.outcome = PgPlan::Outcome::kInfeasible;
    plan.reason = why->message;
    plan.infeasibility = std::move(why);
    return plan;
  }
  return Planner(spec, view).run();
}

std::vector<BundleLocation> locate_bundles(const PgPlan& plan, const ClusterView& view,
                                           const std::vector<std::vector<int>>& gpu_ids) {
  std::vector<BundleLocation> out;
  for (size_t b = 0; b < plan.ranks.size(); ++b) {
    int r = plan.ranks[b];
    const RankInfo& info = view.info(r);
    out.push_back(BundleLocation{static_cast<int>(b), r, info.node,
                                 b < gpu_ids.size() ? gpu_ids[b] : std::vector<int>{},
                                 info.nvlink_domain});
  }
  return out;
}

}  // namespace weft::sched
