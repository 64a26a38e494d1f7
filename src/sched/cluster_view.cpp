#include "sched/cluster_view.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "common/check.hpp"

namespace weft::sched {

ClusterView::ClusterView(std::vector<RankInfo> ranks) : ranks_(std::move(ranks)) {
  std::sort(ranks_.begin(), ranks_.end(),
            [](const RankInfo& a, const RankInfo& b) { return a.rank < b.rank; });
  std::set<std::string> names;
  for (int r = 0; r < size(); ++r) {
    WEFT_CHECK(ranks_[r].rank == r) << "ClusterView needs ranks 0.." << size() - 1
                                    << " exactly once; got rank " << ranks_[r].rank;
    for (const auto& [name, u] : ranks_[r].total) names.insert(name.str());
  }
  names_.assign(names.begin(), names.end());
  const size_t C = names_.size();
  // Names interned after this point are in no rank's total, so no column: ids past the table.
  for (size_t c = 0; c < C; ++c) {
    const uint32_t id = ResourceName(names_[c]).id();
    if (id >= column_by_id_.size()) column_by_id_.resize(id + 1, -1);
    column_by_id_[id] = static_cast<int>(c);
  }

  // Topology: dense node and domain indexes in order of first appearance.
  std::map<int, int> node_idx, domain_idx;
  rank_node_.resize(size());
  for (int r = 0; r < size(); ++r) {
    auto [it, fresh] = node_idx.emplace(ranks_[r].node, static_cast<int>(node_ids_.size()));
    if (fresh) {
      node_ids_.push_back(ranks_[r].node);
      node_ranks_.emplace_back();
      auto [dit, dfresh] =
          domain_idx.emplace(ranks_[r].nvlink_domain, static_cast<int>(domain_ids_.size()));
      if (dfresh) {
        domain_ids_.push_back(ranks_[r].nvlink_domain);
        domain_nodes_.emplace_back();
      }
      node_domain_.push_back(dit->second);
      domain_nodes_[dit->second].push_back(it->second);
    }
    WEFT_CHECK(domain_ids_[node_domain_[it->second]] == ranks_[r].nvlink_domain)
        << "rank " << r << " says node " << ranks_[r].node << " is in NVLink domain "
        << ranks_[r].nvlink_domain << " but another rank of that node disagrees";
    rank_node_[r] = it->second;
    node_ranks_[it->second].push_back(r);
  }

  total_d_.assign(size_t(size()) * C, 0);
  node_total_d_.assign(size_t(num_nodes()) * C, 0);
  max_rank_total_.assign(C, 0);
  max_node_total_.assign(C, 0);
  scratch_.assign(C + 1, 0);
  rank_index_ = FitIndex(size(), static_cast<int>(C) + 1);
  node_index_ = FitIndex(num_nodes(), static_cast<int>(C));
  node_dirty_.assign(num_nodes(), 0);
  node_scratch_.assign(C, 0);
  std::map<std::vector<int64_t>, int> rank_shape_seen;
  for (int r = 0; r < size(); ++r) {
    to_dense(ranks_[r].total, &total_d_[size_t(r) * C]);
    for (size_t c = 0; c < C; ++c) {
      node_total_d_[size_t(rank_node_[r]) * C + c] += total_d_[size_t(r) * C + c];
      max_rank_total_[c] = std::max(max_rank_total_[c], total_d_[size_t(r) * C + c]);
    }
    std::vector<int64_t> shape(&total_d_[size_t(r) * C], &total_d_[size_t(r) * C] + C);
    if (rank_shape_seen.emplace(shape, r).second) rank_shapes_.push_back(r);
  }
  std::map<std::vector<std::vector<int64_t>>, int> node_shape_seen;
  for (int n = 0; n < num_nodes(); ++n) {
    for (size_t c = 0; c < C; ++c) {
      max_node_total_[c] = std::max(max_node_total_[c], node_total_d_[size_t(n) * C + c]);
    }
    std::vector<std::vector<int64_t>> shape;
    for (int r : node_ranks_[n]) {
      shape.emplace_back(&total_d_[size_t(r) * C], &total_d_[size_t(r) * C] + C);
    }
    std::sort(shape.begin(), shape.end());
    if (node_shape_seen.emplace(std::move(shape), n).second) node_shapes_.push_back(n);
  }
  max_domain_total_.assign(C, 0);
  for (const auto& nodes : domain_nodes_) {
    for (size_t c = 0; c < C; ++c) {
      int64_t sum = 0;
      for (int n : nodes) sum += node_total_d_[size_t(n) * C + c];
      max_domain_total_[c] = std::max(max_domain_total_[c], sum);
    }
  }
  for (const auto& [id, idx] : node_idx) node_id_to_index_.emplace_back(id, idx);
  // Everything free at first.
  for (int r = 0; r < size(); ++r) {
    to_dense(ranks_[r].total, scratch_.data());
    refresh_from_scratch(r);
  }
  sum_dirty_nodes();
}

int ClusterView::node_index(int node_id) const {
  auto it = std::lower_bound(node_id_to_index_.begin(), node_id_to_index_.end(),
                             std::make_pair(node_id, -1));
  return it != node_id_to_index_.end() && it->first == node_id ? it->second : -1;
}

int ClusterView::column(std::string_view name) const {
  // A handful of names (CPU, GPU, memory, ...): a scan that compares lengths first beats a
  // binary search of string comparisons.
  if (names_.size() <= 8) {
    for (size_t i = 0; i < names_.size(); ++i) {
      const std::string& n = names_[i];
      if (n.size() == name.size() && std::memcmp(n.data(), name.data(), name.size()) == 0)
        return static_cast<int>(i);
    }
    return -1;
  }
  auto it = std::lower_bound(names_.begin(), names_.end(), name);
  return it != names_.end() && *it == name ? static_cast<int>(it - names_.begin()) : -1;
}

bool ClusterView::to_dense(const ResourceSet& rs, int64_t* out) const {
  std::fill(out, out + names_.size(), 0);
  bool known = true;
  for (const auto& [name, u] : rs) {
    int c = column(name);
    if (c >= 0) {
      out[c] = u;
    } else if (u > 0) {
      known = false;
    }
  }
  return known;
}

ResourceSet ClusterView::from_dense(const int64_t* v) const {
  ResourceSet rs;
  for (size_t c = 0; c < names_.size(); ++c) rs.set_units(names_[c], v[c]);
  return rs;
}

double ClusterView::utilization(int rank) const {
  return static_cast<double>(kUtilScale - avail_dense(rank)[names_.size()]) / kUtilScale;
}

bool ClusterView::fits_now(int rank, const ResourceSet& need) const {
  const int64_t* a = avail_dense(rank);
  for (const auto& [name, u] : need) {
    const int c = column(name);
    if (u > (c >= 0 ? a[c] : 0)) return false;  // a name the view lacks has none free
  }
  return true;
}

void ClusterView::refresh_from_scratch(int rank, uint64_t changed) {
  const size_t C = names_.size();
  int64_t util = 0;
  const int64_t* total = total_dense(rank);
  for (size_t c = 0; c < C; ++c) {
    if (total[c] <= 0) continue;
    int64_t used = std::clamp<int64_t>(total[c] - scratch_[c], 0, total[c]);
    // Round up: a rank with any use of a resource is not "idle" in that resource.
    util = std::max(util, (used * kUtilScale + total[c] - 1) / total[c]);
  }
  scratch_[C] = kUtilScale - util;
  rank_index_.set(rank, scratch_.data());

  if (changed == 0) return;
  const int node = rank_node_[rank];
  if (node_dirty_[node] == 0) dirty_nodes_.push_back(node);
  node_dirty_[node] |= changed;
}

void ClusterView::sum_dirty_nodes() const {
  const size_t C = names_.size();
  for (int node : dirty_nodes_) {
    const uint64_t mask = node_dirty_[node];
    node_dirty_[node] = 0;
    const int64_t* row = node_index_.item(node);
    std::copy(row, row + C, node_scratch_.begin());
    for (size_t c = 0; c < C; ++c) {
      if (c < 64 && !(mask >> c & 1)) continue;
      int64_t sum = 0;
      for (int r : node_ranks_[node]) {
        const int64_t a = avail_dense(r)[c];
        // Saturating: an allocation far past a rank's total (a planner's trial) leaves its units
        // near INT64_MIN, and two such ranks must not wrap around to plenty.
        if (__builtin_add_overflow(sum, a, &sum))
          sum = a < 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
      }
      node_scratch_[c] = sum;
    }
    node_index_.set(node, node_scratch_.data());
  }
  dirty_nodes_.clear();
}

void ClusterView::apply(int rank, const ResourceSet& delta, int sign) {
  // The rank index holds the rank's free units densely: start from them and change only the
  // delta's columns, instead of looking up every name of the rank's set again (a submitter does
  // this twice per task).
  const int64_t* cur = avail_dense(rank);
  std::copy(cur, cur + names_.size(), scratch_.begin());
  uint64_t changed = 0;
  for (const auto& [name, u] : delta) {
    const int c = column(name);
    if (c < 0) continue;  // a name no rank has cannot be held anywhere
    scratch_[c] += sign * u;
    changed |= column_bit(c);
  }
  refresh_from_scratch(rank, changed);
}

void ClusterView::allocate(int rank, const ResourceSet& need) { apply(rank, need, -1); }
void ClusterView::release(int rank, const ResourceSet& need) { apply(rank, need, +1); }

void ClusterView::set_available(int rank, const ResourceSet& avail) {
  to_dense(avail, scratch_.data());  // names the view does not know are dropped
  refresh_from_scratch(rank);
}

ResourceSet ClusterView::node_available(int node) const {
  return from_dense(node_avail_dense(node));
}
ResourceSet ClusterView::node_total(int node) const { return from_dense(node_total_dense(node)); }

}  // namespace weft::sched
