// Placement groups: every strategy, PENDING vs INFEASIBLE reasons, the state machine, and the
// two-phase reservation run end to end over per-rank ledgers.
#include "sched/pg_planner.hpp"

#include <gtest/gtest.h>

#include <set>

#include "sched/pg_feasibility.hpp"
#include "sched/pg_ledger.hpp"
#include "test_cluster.hpp"

namespace weft::sched {
namespace {

using testing::make_cluster;
using testing::make_ranks;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

PgSpec spec(Strategy s, int n, const ResourceSet& bundle, uint64_t id = 1) {
  return PgSpec{id, std::vector<ResourceSet>(n, bundle), s, ""};
}

std::set<int> nodes_of(const PgPlan& p, const ClusterView& v) {
  std::set<int> s;
  for (int r : p.ranks) s.insert(v.node_of(r));
  return s;
}

void expect_view_untouched(const ClusterView& v) {
  for (int r = 0; r < v.size(); ++r) ASSERT_EQ(v.available(r), v.info(r).total) << r;
}

TEST(PgPlanner, PackKeepsConsecutiveBundlesOnOneNode) {
  ClusterView v = make_cluster(4, 4, {{"CPU", 4}, {"GPU", 1}});
  v.allocate(0, {{"GPU", 1}});  // node 0 has 3 free GPUs
  PgPlan p = plan_placement_group(spec(Strategy::kPack, 6, {{"GPU", 1}}), v);
  ASSERT_TRUE(p.placed()) << p.reason;
  // A node that can take all 6 does not exist; bundles fill node by node in order.
  for (size_t b = 1; b < p.ranks.size(); ++b) {
    EXPECT_LE(v.node_of(p.ranks[b - 1]), v.node_of(p.ranks[b]));
  }
  EXPECT_EQ(p.nodes_used(v), 2);
  v.release(0, {{"GPU", 1}});
  expect_view_untouched(v);  // planning leaves no trace
}

TEST(PgPlanner, PackVersusStrictPackOnASplitCluster) {
  // Every node has 2 free GPUs: PACK spreads the group over two nodes, STRICT_PACK waits.
  ClusterView v = make_cluster(3, 4, {{"GPU", 1}});
  for (int n = 0; n < 3; ++n) v.allocate(n * 4, {{"GPU", 1}}), v.allocate(n * 4 + 1, {{"GPU", 1}});
  PgPlan pack = plan_placement_group(spec(Strategy::kPack, 3, {{"GPU", 1}}), v);
  ASSERT_TRUE(pack.placed()) << pack.reason;
  EXPECT_EQ(pack.nodes_used(v), 2);
  PgPlan strict = plan_placement_group(spec(Strategy::kStrictPack, 3, {{"GPU", 1}}), v);
  EXPECT_EQ(strict.outcome, PgPlan::Outcome::kPending);
  EXPECT_TRUE(contains(strict.reason,
                       "STRICT_PACK needs {GPU: 3} on one node; free now at most "
                       "GPU: 2 on node 0"))
      << strict.reason;
  // Once node 2 frees a GPU, STRICT_PACK lands there, all on one node.
  v.release(8, {{"GPU", 1}});
  strict = plan_placement_group(spec(Strategy::kStrictPack, 3, {{"GPU", 1}}), v);
  ASSERT_TRUE(strict.placed()) << strict.reason;
  EXPECT_EQ(nodes_of(strict, v), (std::set<int>{2}));
}

TEST(PgPlanner, PendingNamesTheBundleAndTheMostFreeNow) {
  ClusterView v = make_cluster(3, 1, {{"CPU", 8}, {"GPU", 8}});
  v.allocate(0, {{"GPU", 8}});
  v.allocate(1, {{"GPU", 6}});
  v.allocate(2, {{"GPU", 4}});
  PgSpec s{1, {{{"GPU", 2}}, {{"GPU", 2}}, {{"GPU", 2}}, {{"GPU", 8}}}, Strategy::kPack, ""};
  PgPlan p = plan_placement_group(s, v);
  EXPECT_EQ(p.outcome, PgPlan::Outcome::kPending);
  // Bundles 0-2 took node 2's four free GPUs and node 1's two; bundle 3 finds at most 0 free.
  EXPECT_TRUE(contains(p.reason, "PACK: bundle 3 needs {GPU: 8}; free now at most GPU: "))
      << p.reason;
  PgSpec big{2, {{{"GPU", 5}}}, Strategy::kPack, ""};
  PgPlan q = plan_placement_group(big, v);
  EXPECT_TRUE(contains(q.reason, "bundle 0 needs {GPU: 5}; free now at most GPU: 4 on node 2"))
      << q.reason;
  v.release(0, {{"GPU", 8}});
  v.release(1, {{"GPU", 6}});
  v.release(2, {{"GPU", 4}});
  expect_view_untouched(v);
}

TEST(PgPlanner, FractionalGpuBundlesShareADevice) {
  auto ranks = make_ranks(1, 2, {{"CPU", 4}, {"GPU", 1}});
  ClusterView v(ranks);
  std::vector<PgLedger> ledgers;
  for (const auto& r : ranks) ledgers.emplace_back(r.rank, r.total, r.gpu_ids);
  PgSpec s = spec(Strategy::kStrictPack, 4, {{"CPU", 1}, {"GPU", 0.5}});
  PgPlan p = plan_placement_group(s, v);
  ASSERT_TRUE(p.placed()) << p.reason;
  EXPECT_EQ(p.ranks, (std::vector<int>{0, 0, 1, 1}));  // two halves per one-GPU rank
  for (int b = 0; b < 4; ++b) {
    auto prep = ledgers[p.ranks[b]].prepare(s.id, b, s.bundles[b]);
    ASSERT_TRUE(prep.ok) << prep.why;
    EXPECT_EQ(prep.gpu_ids, ranks[p.ranks[b]].gpu_ids);  // both halves on the rank's one device
  }
  EXPECT_EQ(ledgers[0].free_gpu_units(), 0);
  PgPlan five = plan_placement_group(spec(Strategy::kStrictPack, 5, {{"GPU", 0.5}}), v);
  EXPECT_EQ(five.outcome, PgPlan::Outcome::kInfeasible);
  EXPECT_TRUE(contains(five.reason, "{GPU: 2.5} on one node; the largest node has GPU: 2"))
      << five.reason;
}

TEST(PgPlanner, SpreadUsesDistinctNodesWhenItCanAndFallsBack) {
  ClusterView v = make_cluster(3, 2, {{"CPU", 2}});
  PgPlan p = plan_placement_group(spec(Strategy::kSpread, 3, {{"CPU", 1}}), v);
  ASSERT_TRUE(p.placed());
  EXPECT_EQ(nodes_of(p, v).size(), 3u);
  PgPlan more = plan_placement_group(spec(Strategy::kSpread, 5, {{"CPU", 1}}), v);
  ASSERT_TRUE(more.placed()) << more.reason;  // soft: 5 bundles on 3 nodes
  EXPECT_EQ(nodes_of(more, v).size(), 3u);
}

TEST(PgPlanner, StrictSpreadNeedsDistinctNodes) {
  ClusterView v = make_cluster(3, 2, {{"CPU", 2}});
  PgPlan p = plan_placement_group(spec(Strategy::kStrictSpread, 3, {{"CPU", 2}}), v);
  ASSERT_TRUE(p.placed());
  EXPECT_EQ(nodes_of(p, v).size(), 3u);
  v.allocate(4, {{"CPU", 2}});
  v.allocate(5, {{"CPU", 1}});  // node 2 has no rank with 2 CPUs free
  PgPlan pending = plan_placement_group(spec(Strategy::kStrictSpread, 3, {{"CPU", 2}}), v);
  EXPECT_EQ(pending.outcome, PgPlan::Outcome::kPending);
  EXPECT_TRUE(contains(pending.reason, "bundle 2 needs {CPU: 2} on a node other than the 2"))
      << pending.reason;
  PgPlan never = plan_placement_group(spec(Strategy::kStrictSpread, 4, {{"CPU", 1}}), v);
  EXPECT_EQ(never.outcome, PgPlan::Outcome::kInfeasible);
  EXPECT_TRUE(contains(never.reason, "STRICT_SPREAD needs 4 distinct nodes but only 3"))
      << never.reason;
}

TEST(PgPlanner, NvlinkDomainPicksTheDomainWithFewestNodes) {
  // Two domains of 3 nodes x 4 one-GPU ranks. Domain 0 has 2 free GPUs per node (6 in all);
  // domain 1 has one full node free plus 1 GPU on the others.
  ClusterView v = make_cluster(6, 4, {{"GPU", 1}, {"CPU", 1}}, /*nodes_per_domain=*/3);
  for (int n = 0; n < 3; ++n) v.allocate(n * 4, {{"GPU", 1}}), v.allocate(n * 4 + 1, {{"GPU", 1}});
  for (int n = 4; n < 6; ++n) {
    for (int i = 0; i < 3; ++i) v.allocate(n * 4 + i, {{"GPU", 1}});
  }
  PgPlan p = plan_placement_group(spec(Strategy::kNvlinkDomain, 5, {{"GPU", 1}}), v);
  ASSERT_TRUE(p.placed()) << p.reason;
  EXPECT_EQ(p.nodes_used(v), 2);  // domain 1: node 3 (4 GPUs) + one more
  for (int r : p.ranks) EXPECT_EQ(v.info(r).nvlink_domain, 1);
  EXPECT_EQ(v.node_of(p.ranks[0]), 3);  // the fullest-free node first, consecutive bundles on it
  // 6 GPUs: domain 0 (3 nodes) and domain 1 (3 nodes) tie; 4 fits domain 1 on one node.
  PgPlan four = plan_placement_group(spec(Strategy::kNvlinkDomain, 4, {{"GPU", 1}}), v);
  ASSERT_TRUE(four.placed());
  EXPECT_EQ(four.nodes_used(v), 1);
  PgPlan seven = plan_placement_group(spec(Strategy::kNvlinkDomain, 7, {{"GPU", 1}}), v);
  EXPECT_EQ(seven.outcome, PgPlan::Outcome::kPending);
  EXPECT_TRUE(contains(seven.reason,
                       "NVLINK_DOMAIN needs {GPU: 7} inside one NVLink domain; "
                       "free now at most GPU: 6"))
      << seven.reason;
  PgPlan huge = plan_placement_group(spec(Strategy::kNvlinkDomain, 13, {{"GPU", 1}}), v);
  EXPECT_EQ(huge.outcome, PgPlan::Outcome::kInfeasible);
  ASSERT_TRUE(huge.infeasibility);
  EXPECT_EQ(huge.infeasibility->resource, "GPU");
  EXPECT_EQ(huge.infeasibility->requested, 13);
  EXPECT_EQ(huge.infeasibility->best_available, 12);
  EXPECT_TRUE(contains(huge.reason, "the largest domain has GPU: 12")) << huge.reason;
}

TEST(PgInfeasible, BundleLargerThanAnyRank) {
  ClusterView v = make_cluster(2, 2, {{"CPU", 4}, {"GPU", 1}});
  PgSpec s{3, {{{"GPU", 1}}, {{"GPU", 1}}, {{"GPU", 1}}, {{"GPU", 8}}}, Strategy::kPack, ""};
  PgPlan p = plan_placement_group(s, v);
  EXPECT_EQ(p.outcome, PgPlan::Outcome::kInfeasible);
  ASSERT_TRUE(p.infeasibility);
  EXPECT_EQ(p.infeasibility->resource, "GPU");
  EXPECT_EQ(p.infeasibility->requested, 8);
  EXPECT_EQ(p.infeasibility->best_available, 1);
  EXPECT_TRUE(contains(p.reason, "Bundle 3 can never be placed")) << p.reason;
  EXPECT_TRUE(contains(p.reason, "the largest rank has GPU: 1")) << p.reason;
}

TEST(PgInfeasible, StrictPackLargerThanAnyNode) {
  ClusterView v = make_cluster(4, 8, {{"GPU", 1}});
  PgPlan p = plan_placement_group(spec(Strategy::kStrictPack, 16, {{"GPU", 1}}), v);
  EXPECT_EQ(p.outcome, PgPlan::Outcome::kInfeasible);
  EXPECT_TRUE(contains(p.reason,
                       "STRICT_PACK needs {GPU: 16} on one node; the largest node has "
                       "GPU: 8"))
      << p.reason;
  EXPECT_EQ(p.infeasibility->requested, 16);
  EXPECT_EQ(p.infeasibility->best_available, 8);
  // Sum fits a node, but a bundle must fit within one rank: {GPU: 2} on one-GPU ranks.
  PgPlan split = plan_placement_group(spec(Strategy::kStrictPack, 2, {{"GPU", 2}}), v);
  EXPECT_EQ(split.outcome, PgPlan::Outcome::kInfeasible);
}

TEST(PgInfeasible, CustomResourceNobodyHas) {
  ClusterView v = make_cluster(2, 2, {{"CPU", 4}});
  PgPlan p = plan_placement_group(spec(Strategy::kSpread, 2, {{"CPU", 1}, {"fpga", 1}}), v);
  EXPECT_EQ(p.outcome, PgPlan::Outcome::kInfeasible);
  EXPECT_EQ(p.infeasibility->resource, "fpga");
  EXPECT_TRUE(contains(p.reason, "'fpga', which no rank")) << p.reason;
}

TEST(PgInfeasible, TaskDemandFitsNoBundleNamesTheBundleSizes) {
  std::vector<ResourceSet> bundles{{{"CPU", 2}, {"GPU", 1}}, {{"CPU", 4}}};
  EXPECT_FALSE(check_fits_bundle({{"CPU", 3}}, bundles, -1));
  EXPECT_FALSE(check_fits_bundle({{"GPU", 0.5}}, bundles, 0));
  auto why = check_fits_bundle({{"GPU", 2}}, bundles, -1);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->resource, "GPU");
  EXPECT_EQ(why->requested, 2);
  EXPECT_EQ(why->best_available, 1);
  EXPECT_TRUE(contains(why->message, "0: {CPU: 2, GPU: 1}, 1: {CPU: 4}")) << why->message;
  auto one = check_fits_bundle({{"CPU", 3}}, bundles, 0);
  ASSERT_TRUE(one);
  EXPECT_TRUE(contains(one->message, "does not fit bundle 0")) << one->message;
  auto mix = check_fits_bundle({{"CPU", 3}, {"GPU", 1}}, bundles, -1);
  ASSERT_TRUE(mix);
  EXPECT_TRUE(contains(mix->message, "does not fit any single bundle")) << mix->message;
  auto range = check_fits_bundle({{"CPU", 1}}, bundles, 5);
  ASSERT_TRUE(range);
  EXPECT_TRUE(contains(range->message, "bundle_index 5 is out of range")) << range->message;
}

TEST(PlacementGroupState, Transitions) {
  PlacementGroup g(spec(Strategy::kPack, 2, {{"CPU", 1}}, 4));
  EXPECT_EQ(g.state(), PgState::kPending);
  EXPECT_TRUE(g.mark_pending("bundle 1 needs {CPU: 1}"));
  EXPECT_TRUE(contains(g.describe(), "PENDING: bundle 1 needs")) << g.describe();
  EXPECT_FALSE(g.mark_created({BundleLocation{}}));  // wrong bundle count
  EXPECT_TRUE(g.mark_created({BundleLocation{0, 1, 0, {}, 0}, BundleLocation{1, 2, 1, {}, 0}}));
  EXPECT_EQ(g.state(), PgState::kCreated);
  EXPECT_FALSE(g.mark_infeasible("x"));
  EXPECT_TRUE(g.mark_pending("rank 2 died"));  // rescheduling after a failure
  EXPECT_TRUE(g.locations().empty());
  EXPECT_TRUE(g.mark_removed());
  EXPECT_FALSE(g.mark_removed());
  EXPECT_FALSE(g.mark_pending("again"));
  EXPECT_EQ(g.state(), PgState::kRemoved);
  PlacementGroup bad(spec(Strategy::kStrictPack, 2, {{"CPU", 1}}, 5));
  EXPECT_TRUE(bad.mark_infeasible("STRICT_PACK needs more than a node"));
  EXPECT_FALSE(bad.mark_created({BundleLocation{}, BundleLocation{}}));
  EXPECT_TRUE(contains(bad.describe(), "STRICT_PACK: INFEASIBLE: STRICT_PACK needs"))
      << bad.describe();
}

// The head's part of two-phase creation, done in-process over real ledgers: prepare on every
// rank of the plan; all ok → commit; any failure → rollback everywhere.
struct TwoPhase {
  ClusterView view;
  std::vector<PgLedger> ledgers;
  explicit TwoPhase(std::vector<RankInfo> ranks) : view(ranks) {
    for (const auto& r : ranks) ledgers.emplace_back(r.rank, r.total, r.gpu_ids);
  }
  PlacementGroup create(const PgSpec& s) {
    PlacementGroup g(s);
    PgPlan plan = plan_placement_group(s, view);
    if (plan.outcome == PgPlan::Outcome::kInfeasible) {
      g.mark_infeasible(plan.reason);
      return g;
    }
    if (!plan.placed()) {
      g.mark_pending(plan.reason);
      return g;
    }
    std::vector<std::vector<int>> gpus(s.bundles.size());
    std::set<int> touched;
    for (size_t b = 0; b < s.bundles.size(); ++b) {
      auto p = ledgers[plan.ranks[b]].prepare(s.id, static_cast<int>(b), s.bundles[b]);
      touched.insert(plan.ranks[b]);
      if (!p.ok) {
        for (int r : touched) ledgers[r].rollback(s.id);
        g.mark_pending("bundle " + std::to_string(b) + ": " + p.why);
        return g;
      }
      gpus[b] = p.gpu_ids;
    }
    for (int r : touched) ledgers[r].commit(s.id);
    for (size_t b = 0; b < s.bundles.size(); ++b) view.allocate(plan.ranks[b], s.bundles[b]);
    g.mark_created(locate_bundles(plan, view, gpus));
    return g;
  }
};

TEST(TwoPhase, CreateQueryAndRollbackWhenARankDisagrees) {
  auto ranks = make_ranks(2, 2, {{"CPU", 4}, {"GPU", 2}}, /*nodes_per_domain=*/2);
  TwoPhase tp(ranks);
  PlacementGroup g = tp.create(spec(Strategy::kPack, 3, {{"CPU", 1}, {"GPU", 1}}, 1));
  ASSERT_EQ(g.state(), PgState::kCreated) << g.describe();
  const auto& loc = g.locations();
  EXPECT_EQ(loc[0], (BundleLocation{0, 0, 0, {0}, 0}));
  EXPECT_EQ(loc[1], (BundleLocation{1, 0, 0, {1}, 0}));
  EXPECT_EQ(loc[2].node, 0);
  EXPECT_EQ(loc[2].rank, 1);

  // The head's view is stale: rank 3 started a plain task the head has not heard of yet.
  ASSERT_TRUE(tp.ledgers[3].acquire({{"GPU", 2}}));
  ResourceSet before2 = tp.ledgers[2].available();
  int64_t gpus2 = tp.ledgers[2].free_gpu_units();
  PlacementGroup h = tp.create(spec(Strategy::kStrictPack, 2, {{"GPU", 2}}, 2));
  EXPECT_EQ(h.state(), PgState::kPending);
  EXPECT_TRUE(contains(h.reason(), "rank 3 has GPU: 0 free, 2 needed")) << h.reason();
  EXPECT_EQ(tp.ledgers[2].available(), before2);  // rank 2's prepare was rolled back exactly
  EXPECT_EQ(tp.ledgers[2].free_gpu_units(), gpus2);
  EXPECT_EQ(tp.ledgers[2].num_bundles(), 0u);
}

}  // namespace
}  // namespace weft::sched
