// ClusterView bookkeeping, feasibility messages and the pick_rank policies.
#include <gtest/gtest.h>

#include "sched/feasibility.hpp"
#include "sched/policy.hpp"
#include "test_cluster.hpp"

namespace weft::sched {
namespace {

using testing::make_cluster;
using testing::make_ranks;

TaskRequest task(ResourceSet need, Policy policy = Policy::kDefault, int node = -1,
                 bool soft = true) {
  TaskRequest t;
  t.need = std::move(need);
  t.policy = policy;
  t.node = node;
  t.soft = soft;
  return t;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ClusterView, AllocateReleaseAndNodeAggregates) {
  ClusterView v = make_cluster(2, 2, {{"CPU", 4}, {"GPU", 1}});
  EXPECT_EQ(v.size(), 4);
  EXPECT_EQ(v.num_nodes(), 2);
  EXPECT_EQ(v.node_of(3), 1);
  v.allocate(2, {{"CPU", 3}, {"GPU", 0.5}});
  EXPECT_EQ(v.available(2), (ResourceSet{{"CPU", 1}, {"GPU", 0.5}}));
  EXPECT_DOUBLE_EQ(v.utilization(2), 0.75);
  EXPECT_EQ(v.node_available(1), (ResourceSet{{"CPU", 5}, {"GPU", 1.5}}));
  EXPECT_EQ(v.rank_index().root()[v.column("CPU")], 4 * ResourceSet::kUnit);
  v.release(2, {{"CPU", 3}, {"GPU", 0.5}});
  EXPECT_EQ(v.available(2), v.info(2).total);
  EXPECT_DOUBLE_EQ(v.utilization(2), 0);
  v.set_available(0, {{"CPU", 1}, {"unknown", 5}});
  EXPECT_EQ(v.available(0), (ResourceSet{{"CPU", 1}}));  // GPU 0 free, unknown dropped
  EXPECT_DOUBLE_EQ(v.utilization(0), 1.0);
}

// allocate and release re-sum only the columns they change in the node's row; a load report
// (set_available) re-sums them all. Either way the row is the sum of its ranks'.
TEST(ClusterView, ANodesRowStaysTheSumOfItsRanksThroughEveryKindOfChange) {
  ClusterView v = make_cluster(2, 4, {{"CPU", 4}, {"GPU", 1}, {"memory", 8}});
  auto expect_sums = [&](int step) {
    for (int n = 0; n < v.num_nodes(); ++n) {
      ResourceSet sum;
      for (int r : v.node_ranks(n)) sum += v.available(r);
      ASSERT_EQ(v.node_available(n), sum) << "node " << n << " after step " << step;
    }
  };
  v.allocate(1, {{"CPU", 2}});
  expect_sums(1);
  v.allocate(2, {{"GPU", 1}, {"memory", 3}});
  expect_sums(2);
  v.set_available(3, {{"CPU", 1}});  // GPU and memory: none free now
  expect_sums(3);
  v.release(1, {{"CPU", 2}});
  v.allocate(5, {{"CPU", 4}, {"GPU", 0.25}});
  expect_sums(4);
  EXPECT_EQ(v.node_available(0), (ResourceSet{{"CPU", 13}, {"GPU", 2}, {"memory", 21}}));
  EXPECT_EQ(v.node_available(1), (ResourceSet{{"CPU", 12}, {"GPU", 3.75}, {"memory", 32}}));
}

TEST(Feasibility, CustomResourceNobodyHas) {
  ClusterView v = make_cluster(2, 2, {{"CPU", 4}});
  auto why = check_feasible({{"CPU", 1}, {"tpu", 2}}, v);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->resource, "tpu");
  EXPECT_EQ(why->requested, 2);
  EXPECT_EQ(why->best_available, 0);
  EXPECT_TRUE(contains(why->message, "'tpu', which no rank")) << why->message;
}

TEST(Feasibility, AGpuOnAJobWithoutGpusSaysNoDeviceWasDetectedNotHowToFakeOne) {
  ClusterView v = make_cluster(2, 2, {{"CPU", 4}});
  auto why = check_feasible({{"CPU", 1}, {"GPU", 1}}, v);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->resource, "GPU");
  EXPECT_TRUE(contains(why->message, "no CUDA device was detected on any rank")) << why->message;
  EXPECT_TRUE(contains(why->message, "CUDA_VISIBLE_DEVICES")) << why->message;
  EXPECT_FALSE(contains(why->message, "--weft-resources")) << why->message;
}

TEST(Feasibility, LargerThanAnyRankNamesTheLargest) {
  auto ranks = make_ranks(2, 2, {{"CPU", 4}, {"GPU", 1}});
  ranks[3].total = {{"CPU", 8}, {"GPU", 2}};
  ranks[3].gpu_ids = {0, 1};
  ClusterView v(ranks);
  EXPECT_FALSE(check_feasible({{"GPU", 2}}, v));
  auto why = check_feasible({{"CPU", 1}, {"GPU", 3}}, v);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->resource, "GPU");
  EXPECT_EQ(why->requested, 3);
  EXPECT_EQ(why->best_available, 2);
  EXPECT_TRUE(contains(why->message, "needs GPU: 3 on one rank, but the largest rank has GPU: 2"))
      << why->message;
}

TEST(Feasibility, NoSingleRankHasTheCombination) {
  auto ranks = make_ranks(1, 2, {{"CPU", 64}});
  ranks[1].total = {{"CPU", 4}, {"GPU", 8}};
  ranks[1].gpu_ids = {0, 1, 2, 3, 4, 5, 6, 7};
  ClusterView v(ranks);
  auto why = check_feasible({{"CPU", 32}, {"GPU", 1}}, v);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->resource, "CPU");
  EXPECT_EQ(why->requested, 32);
  EXPECT_EQ(why->best_available, 4);
  EXPECT_TRUE(contains(why->message, "fits no single rank")) << why->message;
}

TEST(Feasibility, HardNodeAffinity) {
  auto ranks = make_ranks(2, 1, {{"CPU", 4}});
  ranks[1].total = {{"CPU", 4}, {"GPU", 1}};
  ranks[1].gpu_ids = {0};
  ClusterView v(ranks);
  EXPECT_FALSE(check_feasible_on_node({{"GPU", 1}}, v, 1));
  auto why = check_feasible_on_node({{"GPU", 1}}, v, 0);
  ASSERT_TRUE(why);
  EXPECT_EQ(why->resource, "GPU");
  EXPECT_TRUE(contains(why->message, "Hard node affinity to node 0")) << why->message;
  auto none = check_feasible_on_node({{"CPU", 1}}, v, 9);
  ASSERT_TRUE(none);
  EXPECT_TRUE(contains(none->message, "node 9, which this job does not have")) << none->message;
}

TEST(PickRank, DefaultPrefersLocalThenPacksBelowThreshold) {
  ClusterView v = make_cluster(2, 4, {{"CPU", 4}});
  TaskRequest t = task({{"CPU", 1}});
  EXPECT_EQ(pick_rank(t, v, 5), 5);  // local fits
  v.allocate(5, {{"CPU", 4}});
  // Local full: the next rank in order from the local one, below 50 % utilisation.
  EXPECT_EQ(pick_rank(t, v, 5), 6);
  v.allocate(6, {{"CPU", 2}});  // 6 at 50 %: no longer below the threshold
  EXPECT_EQ(pick_rank(t, v, 5), 7);
  v.allocate(7, {{"CPU", 3}});
  EXPECT_EQ(pick_rank(t, v, 5), 0);  // wraps around
}

TEST(PickRank, DefaultSpreadsWhenEveryRankIsAboveThreshold) {
  ClusterView v = make_cluster(1, 4, {{"CPU", 4}});
  v.allocate(0, {{"CPU", 4}});
  v.allocate(1, {{"CPU", 3}});
  v.allocate(2, {{"CPU", 2}});
  v.allocate(3, {{"CPU", 3}});
  EXPECT_EQ(pick_rank(task({{"CPU", 1}}), v, 0), 2);   // least loaded
  EXPECT_EQ(pick_rank(task({{"CPU", 3}}), v, 0), -1);  // nobody has room now
  EXPECT_EQ(pick_rank(task({{"GPU", 1}}), v, 0), -1);  // unknown resource: never a rank
}

TEST(PickRank, DefaultPrefersTheRankHoldingTheLargestArguments) {
  ClusterView v = make_cluster(2, 2, {{"CPU", 4}});
  TaskRequest t = task({{"CPU", 1}});
  t.arg_bytes_by_rank = {{1, 100}, {3, 1 << 20}, {2, 5000}};
  EXPECT_EQ(pick_rank(t, v, 0), 3);
  v.allocate(3, {{"CPU", 4}});
  EXPECT_EQ(pick_rank(t, v, 0), 2);  // next largest holder that fits
}

TEST(PickRank, DefaultFallsBackToARankOnTheHoldersNodeBeforeTheLocalRank) {
  ClusterView v = make_cluster(2, 2, {{"CPU", 4}});
  TaskRequest t = task({{"CPU", 1}});
  t.arg_bytes_by_rank = {{3, 1 << 20}};
  v.allocate(3, {{"CPU", 4}});
  EXPECT_EQ(pick_rank(t, v, 0), 2);  // rank 2 reads the same node store as the holder, rank 3
  v.allocate(2, {{"CPU", 4}});
  EXPECT_EQ(pick_rank(t, v, 0), 0);  // the holder's node is full: the local rank
}

TEST(PickRank, SpreadPicksTheLeastLoadedAndRotates) {
  ClusterView v = make_cluster(2, 2, {{"CPU", 4}});
  TaskRequest t = task({{"CPU", 1}}, Policy::kSpread);
  std::vector<int> seen;
  for (int i = 0; i < 4; ++i) {
    int r = pick_rank(t, v, 0);
    seen.push_back(r);
    v.allocate(r, t.need);
  }
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 0}));
  v.allocate(2, {{"CPU", 2}});
  int r = pick_rank(t, v, 0);
  EXPECT_NE(r, 2);
}

TEST(PickRank, NodeAffinityHardAndSoft) {
  ClusterView v = make_cluster(3, 2, {{"CPU", 2}});
  TaskRequest t = task({{"CPU", 2}}, Policy::kNodeAffinity, /*node=*/2, /*soft=*/false);
  EXPECT_EQ(pick_rank(t, v, 0), 4);
  v.allocate(4, {{"CPU", 2}});
  EXPECT_EQ(pick_rank(t, v, 0), 5);
  v.allocate(5, {{"CPU", 1}});
  EXPECT_EQ(pick_rank(t, v, 0), -1);  // hard: wait for node 2
  t.soft = true;
  EXPECT_EQ(pick_rank(t, v, 0), 0);  // soft: default policy
}

TEST(PickRank, NeverReturnsARankTheRequestDoesNotFit) {
  ClusterView v = make_cluster(4, 4, {{"CPU", 8}, {"GPU", 1}, {"memory", 100}});
  uint32_t seed = 12345;
  auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
  for (int i = 0; i < 2000; ++i) {
    TaskRequest t = task({{"CPU", double(rnd() % 4 + 1)}, {"GPU", (rnd() % 3) * 0.5}});
    t.policy = static_cast<Policy>(rnd() % 3);
    t.node = static_cast<int>(rnd() % 4);
    int r = pick_rank(t, v, static_cast<int>(rnd() % 16));
    if (r >= 0) {
      ASSERT_TRUE(v.fits_now(r, t.need)) << i;
      v.allocate(r, t.need);
    } else {
      for (int k = 0; k < v.size(); ++k) {
        ASSERT_FALSE(v.fits_now(k, t.need) && t.policy != Policy::kNodeAffinity) << i;
      }
    }
    if (i % 7 == 0) {  // churn: free a random rank
      int k = static_cast<int>(rnd() % 16);
      v.set_available(k, v.info(k).total);
    }
  }
}

}  // namespace
}  // namespace weft::sched
