// ClusterView: one rank's picture of the whole job — every rank's total resources (known from
// bootstrap), its free resources now (its own exactly, the others' from load reports), and the
// topology rank → node → NVLink domain. Scheduling policies and the placement-group planner read
// it through indexes (FitIndex over ranks and over nodes) so that a decision on a 10,000-node
// job costs microseconds, not a scan.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/fit_index.hpp"
#include "sched/resource_set.hpp"

namespace weft::sched {

struct RankInfo {
  int rank = 0;
  int node = 0;           // any id; ranks with the same id share memory
  int nvlink_domain = 0;  // any id; every node belongs to exactly one domain
  ResourceSet total;
  std::vector<int> gpu_ids;  // device ids visible to this rank
};

class ClusterView {
 public:
  // Utilisation is quantised to 1/kUtilScale; the rank index carries "kUtilScale − utilisation"
  // as one more column so "below the pack threshold" is just one more demand to cover.
  static constexpr int64_t kUtilScale = 1000;

  // `ranks` must hold ranks 0..n-1 (any order). Resource names that appear in no rank's total
  // are unknown to the view: a demand for them is infeasible.
  explicit ClusterView(std::vector<RankInfo> ranks);

  int size() const { return static_cast<int>(ranks_.size()); }
  const RankInfo& info(int rank) const { return ranks_[rank]; }
  // What is free on the rank (of the names the view knows): built from the dense index, which is
  // the only copy kept (a submitter changes it twice per task).
  ResourceSet available(int rank) const { return from_dense(avail_dense(rank)); }
  bool fits_now(int rank, const ResourceSet& need) const;
  // Critical-resource utilisation in [0, 1]: the most used fraction over the rank's resources.
  double utilization(int rank) const;

  void allocate(int rank, const ResourceSet& need);
  void release(int rank, const ResourceSet& need);
  void set_available(int rank, const ResourceSet& avail);  // from a load report

  // Topology, by dense index (0..num_nodes()-1 in order of first appearance by rank).
  int num_nodes() const { return static_cast<int>(node_ranks_.size()); }
  int node_of(int rank) const { return rank_node_[rank]; }
  int node_id(int node) const { return node_ids_[node]; }
  int node_index(int node_id) const;  // dense index of a node id; -1 when no rank has it
  const std::vector<int>& node_ranks(int node) const { return node_ranks_[node]; }
  int num_domains() const { return static_cast<int>(domain_nodes_.size()); }
  int domain_of_node(int node) const { return node_domain_[node]; }
  int domain_id(int domain) const { return domain_ids_[domain]; }
  const std::vector<int>& domain_nodes(int domain) const { return domain_nodes_[domain]; }
  ResourceSet node_available(int node) const;
  ResourceSet node_total(int node) const;

  // Dense columns, for the policies and planners of this module.
  int columns() const { return static_cast<int>(names_.size()); }
  const std::string& column_name(int c) const { return names_[c]; }
  int column(std::string_view name) const;  // -1 when unknown
  // By the name's interned id: one load (a submitter looks names up several times per task).
  int column(ResourceName name) const {
    return name.id() < column_by_id_.size() ? column_by_id_[name.id()] : -1;
  }
  // Fills columns() values; returns false when `rs` asks for an unknown resource.
  bool to_dense(const ResourceSet& rs, int64_t* out) const;
  ResourceSet from_dense(const int64_t* v) const;
  const int64_t* total_dense(int rank) const { return &total_d_[size_t(rank) * names_.size()]; }
  const int64_t* avail_dense(int rank) const { return rank_index_.item(rank); }
  const int64_t* node_avail_dense(int node) const {
    sum_dirty_nodes();
    return node_index_.item(node);
  }
  const int64_t* node_total_dense(int node) const {
    return &node_total_d_[size_t(node) * names_.size()];
  }
  // Rank index columns: columns() resources, then headroom (kUtilScale − utilisation).
  const FitIndex& rank_index() const { return rank_index_; }
  const FitIndex& node_index() const {
    sum_dirty_nodes();
    return node_index_;
  }
  // One representative rank per distinct total (a cluster usually has one or two shapes), and
  // one representative node per distinct multiset of rank totals: feasibility checks test these
  // instead of every rank.
  const std::vector<int>& rank_shapes() const { return rank_shapes_; }
  const std::vector<int>& node_shapes() const { return node_shapes_; }
  // Largest total of column c on any rank / any node.
  int64_t max_rank_total(int c) const { return max_rank_total_[c]; }
  int64_t max_node_total(int c) const { return max_node_total_[c]; }
  int64_t max_domain_total(int c) const { return max_domain_total_[c]; }

 private:
  void apply(int rank, const ResourceSet& delta, int sign);
  // scratch_[0, columns()) holds the rank's free units; `changed`: the columns that changed, as
  // column_bit()s. The rank's node is marked, not summed: see sum_dirty_nodes.
  void refresh_from_scratch(int rank, uint64_t changed = ~uint64_t(0));
  // Bit c of a node's dirty mask; columns past 63 share every bit.
  static uint64_t column_bit(int c) { return c < 64 ? uint64_t(1) << c : ~uint64_t(0); }
  // Node rows are sums of their ranks' rows, read only by placement-group planning: a submitter
  // changes a rank's row twice per task, so the sums are brought up to date when next read, in
  // the columns that changed since (a node of 64 ranks would otherwise read 64 rows each time).
  void sum_dirty_nodes() const;

  std::vector<RankInfo> ranks_;
  std::vector<std::string> names_;  // sorted column names
  std::vector<int> column_by_id_;   // ResourceName::id() → column, -1 for names not in the view
  std::vector<int64_t> total_d_, node_total_d_, scratch_;
  FitIndex rank_index_;
  mutable FitIndex node_index_;
  // Per node: the columns changed since its row was summed (bit c; every bit when c ≥ 64).
  mutable std::vector<uint64_t> node_dirty_;
  mutable std::vector<int> dirty_nodes_;
  mutable std::vector<int64_t> node_scratch_;
  std::vector<int> rank_node_, node_ids_, node_domain_, domain_ids_;
  std::vector<std::vector<int>> node_ranks_, domain_nodes_;
  std::vector<int> rank_shapes_, node_shapes_;
  std::vector<int64_t> max_rank_total_, max_node_total_, max_domain_total_;
  std::vector<std::pair<int, int>> node_id_to_index_;  // sorted by id
};

}  // namespace weft::sched
