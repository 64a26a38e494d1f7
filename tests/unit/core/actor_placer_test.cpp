// Where a creator's actors go, without MPI: spread by count over the live ranks that can host
// them, node affinities hard and soft, and what happens when the ranks that could host one fail.
#include "core/actor_placer.hpp"

#include <gtest/gtest.h>

#include "placement_test_util.hpp"

namespace weft::core {
namespace {

using sched::ResourceSet;

// `nodes` × `per_node` ranks with 2 CPUs each; rank r has gpus[r] GPUs (none past its end).
sched::ClusterView cluster(int nodes, int per_node, std::vector<double> gpus = {}) {
  return testing::cluster_of(nodes, per_node, [&](int r) {
    ResourceSet total{{"CPU", 2}};
    if (r < static_cast<int>(gpus.size()) && gpus[r] > 0) total.set("GPU", gpus[r]);
    return total;
  });
}

const ResourceSet kCpu{{"CPU", 1}};
using testing::affinity;
using testing::contains;

TEST(ActorPlacer, ActorsSpreadByCountFromTheCreatorsOwnRank) {
  sched::ClusterView view = cluster(2, 2);
  ActorPlacer p(view, 2);
  FailedRanks failed(4);
  std::vector<int> got;
  for (int i = 0; i < 8; ++i) got.push_back(p.place(kCpu, Strategy{}, failed).rank);
  // An actor holds its rank for its lifetime: more actors than CPUs still spread evenly.
  EXPECT_EQ(got, (std::vector<int>{2, 3, 0, 1, 2, 3, 0, 1}));
  p.count(0);    // a bundle's actor
  p.uncount(3);  // a named actor whose name was taken
  EXPECT_EQ(p.place(kCpu, Strategy{}, failed).rank, 3);
  EXPECT_EQ(p.placed(0), 3);
}

TEST(ActorPlacer, OnlyRanksThatCanHostItAndAreAliveAreChosen) {
  sched::ClusterView view = cluster(1, 4, {0, 1, 0, 1});
  ActorPlacer p(view, 0);
  FailedRanks failed(4);
  const ResourceSet gpu{{"GPU", 1}};
  std::vector<int> got;
  for (int i = 0; i < 4; ++i) got.push_back(p.place(gpu, Strategy{}, failed).rank);
  EXPECT_EQ(got, (std::vector<int>{1, 3, 1, 3}));
  failed.add(3);
  EXPECT_EQ(p.place(gpu, Strategy{}, failed).rank, 1);
  failed.add(1);
  ActorPlacer::Placed none = p.place(gpu, Strategy{}, failed);
  EXPECT_EQ(none.rank, -1);
  EXPECT_TRUE(contains(none.why, "every rank that could host it")) << none.why;
  EXPECT_TRUE(contains(none.why, "has failed")) << none.why;
}

TEST(ActorPlacer, AHardAffinityNeverLeavesItsNodeEvenWhenItsRanksFail) {
  sched::ClusterView view = cluster(2, 2);
  ActorPlacer p(view, 0);
  FailedRanks failed(4);
  for (int i = 0; i < 4; ++i) {
    ActorPlacer::Placed a = p.place(kCpu, affinity(1, false), failed);
    EXPECT_TRUE(a.rank == 2 || a.rank == 3) << a.rank;
    EXPECT_TRUE(a.fallback.empty());
  }
  failed.add(2);
  EXPECT_EQ(p.place(kCpu, affinity(1, false), failed).rank, 3);
  failed.add(3);
  ActorPlacer::Placed none = p.place(kCpu, affinity(1, false), failed);
  EXPECT_EQ(none.rank, -1);  // before: placed on node 0 as if the affinity were soft
  EXPECT_TRUE(contains(none.why, "every rank of node 1")) << none.why;
  ActorPlacer::Placed missing = p.place(kCpu, affinity(5, false), failed);
  EXPECT_EQ(missing.rank, -1);
  EXPECT_TRUE(contains(missing.why, "node 5, which this job does not have")) << missing.why;
}

TEST(ActorPlacer, ASoftAffinityFallsBackToEveryRankAndSaysSoOncePerNode) {
  sched::ClusterView view = cluster(2, 2, {0, 0, 1, 1});
  ActorPlacer p(view, 0);
  FailedRanks failed(4);
  const ResourceSet gpu{{"GPU", 1}};
  // Node 0 has no GPU: the actor goes to node 1.
  ActorPlacer::Placed a = p.place(gpu, affinity(0, true), failed);
  EXPECT_EQ(view.node_of(a.rank), 1);
  EXPECT_TRUE(contains(a.fallback, "node 0, which cannot host it; placed on rank")) << a.fallback;
  EXPECT_TRUE(p.place(gpu, affinity(0, true), failed).fallback.empty());  // once
  ActorPlacer::Placed b = p.place(kCpu, affinity(9, true), failed);
  EXPECT_GE(b.rank, 0);
  EXPECT_TRUE(contains(b.fallback, "node 9, which this job does not have")) << b.fallback;
  EXPECT_TRUE(p.place(kCpu, affinity(9, true), failed).fallback.empty());  // once
  // On its node when it can host it: no fallback.
  ActorPlacer::Placed c = p.place(kCpu, affinity(0, true), failed);
  EXPECT_EQ(view.node_of(c.rank), 0);
  EXPECT_TRUE(c.fallback.empty());
}

}  // namespace
}  // namespace weft::core
