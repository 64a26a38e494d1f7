#include "sched/policy.hpp"

#include <algorithm>

#include <boost/container/small_vector.hpp>

namespace weft::sched {
namespace {

// Demand over the rank index's columns: resources, then the headroom floor.
struct Demand {
  boost::container::small_vector<int64_t, 8> v;  // a handful of columns: no heap per pick
  bool known;
  Demand(const ClusterView& view, const ResourceSet& need) : v(view.columns() + 1, 0) {
    known = view.to_dense(need, v.data());
  }
  void min_headroom(int64_t h) { v.back() = h; }
};

// The least loaded rank that fits: binary search on the headroom floor (the predicate "some
// rank with headroom ≥ h fits" is monotone in h), so ~log2(kUtilScale) indexed queries.
int least_loaded(const ClusterView& view, Demand& d, int start) {
  const FitIndex& idx = view.rank_index();
  d.min_headroom(0);
  int best = idx.find_circular(d.v.data(), start);
  if (best < 0) return -1;
  int64_t lo = view.rank_index().item(best)[view.columns()], hi = ClusterView::kUtilScale;
  while (lo < hi) {  // invariant: a fitting rank with headroom ≥ lo exists
    int64_t mid = (lo + hi + 1) / 2;
    d.min_headroom(mid);
    int r = idx.find_circular(d.v.data(), start);
    if (r >= 0) {
      best = r;
      lo = view.rank_index().item(r)[view.columns()];
    } else {
      hi = mid - 1;
    }
  }
  d.min_headroom(lo);
  return idx.find_circular(d.v.data(), start);
}

int pick_default(const TaskRequest& req, const ClusterView& view, int local_rank,
                 const PickOptions& opts, Demand& d) {
  if (!req.arg_bytes_by_rank.empty()) {
    auto holders = req.arg_bytes_by_rank;
    std::stable_sort(holders.begin(), holders.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [rank, bytes] : holders) {
      if (bytes == 0 || rank < 0 || rank >= view.size()) continue;
      if (view.fits_now(rank, req.need)) return rank;
      // Any rank of the holder's node reads the bytes from the same store.
      for (int r : view.node_ranks(view.node_of(rank)))
        if (view.fits_now(r, req.need)) return r;
    }
  }
  if (local_rank >= 0 && local_rank < view.size() && view.fits_now(local_rank, req.need)) {
    return local_rank;
  }
  auto threshold = static_cast<int64_t>(opts.pack_threshold * ClusterView::kUtilScale);
  d.min_headroom(ClusterView::kUtilScale - threshold + 1);  // utilisation < threshold
  int r = view.rank_index().find_circular(d.v.data(), std::max(local_rank, 0));
  if (r >= 0) return r;
  return least_loaded(view, d, std::max(local_rank, 0));
}

}  // namespace

int pick_rank(const TaskRequest& req, const ClusterView& view, int local_rank,
              const PickOptions& opts) {
  Demand d(view, req.need);
  if (!d.known || view.size() == 0) return -1;
  switch (req.policy) {
    case Policy::kSpread:
      return least_loaded(view, d, local_rank + 1);
    case Policy::kNodeAffinity: {
      int n = view.node_index(req.node);
      if (n >= 0) {
        const auto& ranks = view.node_ranks(n);
        if (std::find(ranks.begin(), ranks.end(), local_rank) != ranks.end() &&
            view.fits_now(local_rank, req.need)) {
          return local_rank;
        }
        for (int r : ranks) {
          if (view.fits_now(r, req.need)) return r;
        }
      }
      if (!req.soft) return -1;
      return pick_default(req, view, local_rank, opts, d);
    }
    case Policy::kDefault:
      break;
  }
  return pick_default(req, view, local_rank, opts, d);
}

}  // namespace weft::sched
