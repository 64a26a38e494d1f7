#include "sched/pg_feasibility.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace weft::sched {
namespace {

std::string amount(int64_t u) { return ResourceSet::format_units(u); }

Infeasibility make(const std::string& res, int64_t req, int64_t best, std::string msg) {
  return Infeasibility{res, ResourceSet::to_double(req), ResourceSet::to_double(best),
                       std::move(msg)};
}

bool fits(const int64_t* need, const int64_t* cap, int C) {
  for (int c = 0; c < C; ++c) {
    if (need[c] > cap[c]) return false;
  }
  return true;
}

// First-fit decreasing of the bundles into the *totals* of one node's ranks.
bool node_can_host_all(const ClusterView& view, int node, const std::vector<int64_t>& dense,
                       int nb) {
  const int C = view.columns();
  std::vector<int> order(nb);
  std::iota(order.begin(), order.end(), 0);
  auto weight = [&](int b) {
    int64_t w = 0;
    for (int c = 0; c < C; ++c)
      w += dense[size_t(b) * C + c] / std::max<int64_t>(view.max_rank_total(c), 1);
    return w;
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weight(a) > weight(b); });
  const auto& ranks = view.node_ranks(node);
  std::vector<int64_t> room;
  for (int r : ranks) room.insert(room.end(), view.total_dense(r), view.total_dense(r) + C);
  for (int b : order) {
    bool placed = false;
    for (size_t i = 0; i < ranks.size() && !placed; ++i) {
      if (fits(&dense[size_t(b) * C], &room[i * C], C)) {
        for (int c = 0; c < C; ++c) room[i * C + c] -= dense[size_t(b) * C + c];
        placed = true;
      }
    }
    if (!placed) return false;
  }
  return true;
}

}  // namespace

std::optional<Infeasibility> check_group_feasible(const PgSpec& spec, const ClusterView& view) {
  const int C = view.columns();
  const int nb = static_cast<int>(spec.bundles.size());
  const std::string strat = strategy_name(spec.strategy);
  if (nb == 0) return make("", 0, 0, "A placement group needs at least one bundle.");
  std::vector<int64_t> dense(size_t(nb) * C), sum(C, 0);
  for (int b = 0; b < nb; ++b) {
    if (auto why = check_feasible(spec.bundles[b], view)) {
      why->message = "Bundle " + std::to_string(b) + " can never be placed: " + why->message;
      return why;
    }
    view.to_dense(spec.bundles[b], &dense[size_t(b) * C]);
    for (int c = 0; c < C; ++c) sum[c] += dense[size_t(b) * C + c];
  }
  ResourceSet total = view.from_dense(sum.data());

  switch (spec.strategy) {
    case Strategy::kStrictPack: {
      for (int c = 0; c < C; ++c) {
        if (sum[c] > view.max_node_total(c)) {
          const std::string& n = view.column_name(c);
          return make(n, sum[c], view.max_node_total(c),
                      "STRICT_PACK needs " + total.str() + " on one node; the largest node has " +
                          n + ": " + amount(view.max_node_total(c)) +
                          ". Use PACK, or smaller "
                          "bundles.");
        }
      }
      for (int node : view.node_shapes()) {
        if (node_can_host_all(view, node, dense, nb)) return std::nullopt;
      }
      return make("", 0, 0,
                  "STRICT_PACK needs " + total.str() +
                      " on one node; no node's ranks can hold "
                      "these bundles together (a bundle must fit within one rank). Use PACK.");
    }
    case Strategy::kStrictSpread: {
      // Hall's condition on prefixes of the bundle list: the first k bundles need at least k
      // distinct nodes able to host one of them (necessary, so never a false INFEASIBLE).
      std::vector<int> order(nb);
      std::iota(order.begin(), order.end(), 0);
      std::vector<char> can(view.num_nodes(), 0);
      int hosts = 0;
      for (int k = 0; k < nb; ++k) {
        const int64_t* need = &dense[size_t(order[k]) * C];
        for (int n = 0; n < view.num_nodes() && hosts < nb; ++n) {
          if (can[n]) continue;
          for (int r : view.node_ranks(n)) {
            if (fits(need, view.total_dense(r), C)) {
              can[n] = 1, ++hosts;
              break;
            }
          }
        }
        if (hosts < k + 1) {
          return make("", k + 1, hosts,
                      "STRICT_SPREAD needs " + std::to_string(nb) + " distinct nodes but only " +
                          std::to_string(hosts) + " of the job's " +
                          std::to_string(view.num_nodes()) + " nodes can host its bundles.");
        }
        if (hosts >= nb) break;
      }
      return std::nullopt;
    }
    case Strategy::kNvlinkDomain:
      for (int c = 0; c < C; ++c) {
        if (sum[c] > view.max_domain_total(c)) {
          const std::string& n = view.column_name(c);
          return make(n, sum[c], view.max_domain_total(c),
                      "NVLINK_DOMAIN needs " + total.str() +
                          " inside one NVLink domain; the "
                          "largest domain has " +
                          n + ": " + amount(view.max_domain_total(c)) + ".");
        }
      }
      return std::nullopt;
    case Strategy::kPack:
    case Strategy::kSpread:
      for (int c = 0; c < C; ++c) {
        int64_t all = 0;
        for (int r = 0; r < view.size() && all < sum[c]; ++r) all += view.total_dense(r)[c];
        if (sum[c] > all) {
          const std::string& n = view.column_name(c);
          return make(n, sum[c], all,
                      strat + " needs " + total.str() + " in all; the whole job has " + n + ": " +
                          amount(all) + ".");
        }
      }
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace weft::sched
