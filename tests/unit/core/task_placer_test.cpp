// Where a submitter's ready tasks go, without MPI: free slots first and held until the task
// ends, then the fewest tasks out per CPU; failed ranks, node affinities, reservations of
// placement groups, stolen and retried tasks.
#include "core/task_placer.hpp"

#include <gtest/gtest.h>

#include "placement_test_util.hpp"

namespace weft::core {
namespace {

using sched::ResourceSet;

// `nodes` × `per_node` ranks; rank r has cpus[r] CPUs (1 when cpus is shorter).
sched::ClusterView cluster(int nodes, int per_node, std::vector<double> cpus = {}) {
  return testing::cluster_of(nodes, per_node, [&](int r) {
    return ResourceSet{{"CPU", r < static_cast<int>(cpus.size()) ? cpus[r] : 1.0}};
  });
}

const ResourceSet kCpu{{"CPU", 1}};
const Strategy kDefault{};
using testing::affinity;
using testing::contains;

TEST(TaskPlacer, FreeSlotsAreTakenFirstAndHeldUntilTheTaskEnds) {
  sched::ClusterView view = cluster(2, 2);
  TaskPlacer p(view, 0);
  FailedRanks failed(4);
  std::vector<int> got;
  for (int i = 0; i < 4; ++i) {
    TaskPlacer::Placed t = p.place(kCpu, kDefault, {}, failed);
    EXPECT_TRUE(t.reserved);
    got.push_back(t.rank);
  }
  EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 3}));  // the local rank, then the others in order
  TaskPlacer::Placed full = p.place(kCpu, kDefault, {}, failed);
  EXPECT_FALSE(full.reserved);  // no slot left: queued at a rank's gate
  EXPECT_EQ(full.rank, 0);
  p.finished(2, kCpu, /*reserved=*/true);
  TaskPlacer::Placed next = p.place(kCpu, kDefault, {}, failed);
  EXPECT_EQ(next.rank, 2);  // the slot its result freed
  EXPECT_TRUE(next.reserved);
  EXPECT_EQ(p.load(0), 2);
  EXPECT_EQ(p.load(2), 1);
}

TEST(TaskPlacer, WhenEveryRankIsFullTasksGoWhereFewestAreOutPerCpu) {
  sched::ClusterView view = cluster(1, 3, {1, 1, 2});
  TaskPlacer p(view, 1);
  FailedRanks failed(3);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(p.place(kCpu, kDefault, {}, failed).reserved);
  std::vector<int> got;
  for (int i = 0; i < 6; ++i) {
    TaskPlacer::Placed t = p.place(kCpu, kDefault, {}, failed);
    EXPECT_FALSE(t.reserved);
    got.push_back(t.rank);
  }
  // Out per CPU 1, 1, 1: ties go to the local rank, then onwards from it.
  EXPECT_EQ(got, (std::vector<int>{1, 2, 0, 2, 1, 2}));
  EXPECT_EQ(p.load(0), 2);
  EXPECT_EQ(p.load(1), 3);
  EXPECT_EQ(p.load(2), 5);
  // A rank that finishes more gets more: two results from rank 0 make it the least loaded.
  p.finished(0, kCpu, false);
  p.finished(0, kCpu, true);
  EXPECT_EQ(p.place(kCpu, kDefault, {}, failed).rank, 0);
}

TEST(TaskPlacer, FailedRanksGetNoWorkAndWhenAllHaveFailedTheReasonSaysSo) {
  sched::ClusterView view = cluster(1, 3);
  TaskPlacer p(view, 0);
  FailedRanks failed(3);
  failed.add(1);
  std::vector<int> got;
  for (int i = 0; i < 6; ++i) {
    TaskPlacer::Placed t = p.place(kCpu, kDefault, {}, failed);
    EXPECT_EQ(t.reserved, i < 2) << "task " << i;  // the live ranks' free slots are taken
    got.push_back(t.rank);
  }
  EXPECT_EQ(got, (std::vector<int>{0, 2, 0, 2, 0, 2}));
  failed.add(0);
  failed.add(2);
  TaskPlacer::Placed none = p.place(kCpu, kDefault, {}, failed);
  EXPECT_EQ(none.rank, -1);
  EXPECT_TRUE(contains(none.why, "every rank that could run it")) << none.why;
  EXPECT_TRUE(contains(none.why, "has failed")) << none.why;
  EXPECT_EQ(p.overflow_rank(kCpu, kDefault, failed), -1);
}

TEST(TaskPlacer, InfeasibleRequestsAreRefusedWithTheMissingResourceAndNothingCounted) {
  sched::ClusterView view = cluster(1, 2);
  TaskPlacer p(view, 0);
  FailedRanks failed(2);
  TaskPlacer::Placed t = p.place({{"GPU", 1}}, kDefault, {}, failed);
  EXPECT_EQ(t.rank, -1);
  EXPECT_TRUE(contains(t.why, "GPU")) << t.why;
  TaskPlacer::Placed big = p.place({{"CPU", 2}}, kDefault, {}, failed);
  EXPECT_EQ(big.rank, -1);
  EXPECT_TRUE(contains(big.why, "CPU")) << big.why;
  EXPECT_EQ(p.load(0) + p.load(1), 0);
  EXPECT_EQ(p.place(kCpu, kDefault, {}, failed).rank, 0);  // a feasible shape after them
}

TEST(TaskPlacer, HardAffinityStaysOnItsNodeWhenFullAndAMissingNodeIsNamed) {
  sched::ClusterView view = cluster(2, 2);
  TaskPlacer p(view, 0);
  FailedRanks failed(4);
  for (int i = 0; i < 8; ++i) {
    TaskPlacer::Placed t = p.place(kCpu, affinity(1, false), {}, failed);
    EXPECT_TRUE(t.rank == 2 || t.rank == 3) << "task " << i << " went to rank " << t.rank;
    EXPECT_TRUE(t.fallback.empty());
  }
  EXPECT_EQ(p.load(2), 4);
  EXPECT_EQ(p.load(3), 4);
  TaskPlacer::Placed none = p.place(kCpu, affinity(9, false), {}, failed);
  EXPECT_EQ(none.rank, -1);
  EXPECT_TRUE(contains(none.why, "node 9")) << none.why;
  EXPECT_EQ(p.affinity_infeasible(kCpu, affinity(9, true)), std::nullopt);  // soft: no error
  // Its node's ranks failed: the hard affinity has nowhere left.
  failed.add(2);
  failed.add(3);
  EXPECT_EQ(p.place(kCpu, affinity(1, false), {}, failed).rank, -1);
}

TEST(TaskPlacer, SoftAffinityFallsBackWhenItsNodeIsFullAndSaysSoOncePerNode) {
  sched::ClusterView view = cluster(2, 2);
  TaskPlacer p(view, 0);
  FailedRanks failed(4);
  EXPECT_EQ(p.place(kCpu, affinity(1, true), {}, failed).rank, 2);
  EXPECT_EQ(p.place(kCpu, affinity(1, true), {}, failed).rank, 3);
  TaskPlacer::Placed away = p.place(kCpu, affinity(1, true), {}, failed);
  EXPECT_EQ(view.node_of(away.rank), 0);
  EXPECT_TRUE(away.reserved);
  EXPECT_TRUE(contains(away.fallback, "asked for node 1, which has no room for it now"))
      << away.fallback;
  EXPECT_TRUE(p.place(kCpu, affinity(1, true), {}, failed).fallback.empty());  // once
  TaskPlacer::Placed unknown = p.place(kCpu, affinity(7, true), {}, failed);
  EXPECT_GE(unknown.rank, 0);
  EXPECT_TRUE(contains(unknown.fallback, "node 7, which this job does not have"))
      << unknown.fallback;
  EXPECT_TRUE(p.place(kCpu, affinity(7, true), {}, failed).fallback.empty());  // once
}

TEST(TaskPlacer, ABundleHeldKeepsPlainTasksOffItsCpusUntilItIsFreed) {
  sched::ClusterView view = cluster(1, 3);
  TaskPlacer p(view, 0);
  FailedRanks failed(3);
  p.hold_bundle(1, kCpu);
  for (int i = 0; i < 6; ++i)
    EXPECT_NE(p.place(kCpu, kDefault, {}, failed).rank, 1) << "task " << i;
  p.free_bundle(1, kCpu);
  TaskPlacer::Placed t = p.place(kCpu, kDefault, {}, failed);
  EXPECT_EQ(t.rank, 1);
  EXPECT_TRUE(t.reserved);
  // Held everywhere: queued where it fits in the total, for a reservation may go away.
  sched::ClusterView one = cluster(1, 1);
  TaskPlacer q(one, 0);
  FailedRanks none_failed(1);
  q.hold_bundle(0, kCpu);
  TaskPlacer::Placed waits = q.place(kCpu, kDefault, {}, none_failed);
  EXPECT_EQ(waits.rank, 0);
  EXPECT_FALSE(waits.reserved);
}

TEST(TaskPlacer, AStolenTaskTakesAFreeSlotAtItsThiefAndARetriedOneNever) {
  sched::ClusterView view = cluster(1, 2);
  TaskPlacer p(view, 0);
  FailedRanks failed(2);
  TaskPlacer::Placed a = p.place(kCpu, kDefault, {}, failed);  // rank 0, a slot
  TaskPlacer::Placed b = p.place(kCpu, kDefault, {}, failed);  // rank 1, a slot
  TaskPlacer::Placed c = p.place(kCpu, kDefault, {}, failed);  // queued at rank 0
  ASSERT_EQ(c.rank, 0);
  ASSERT_FALSE(c.reserved);
  p.finished(b.rank, kCpu, b.reserved);
  bool reserved = c.reserved;
  p.moved(0, 1, kCpu, &reserved, /*take_free_slot=*/true);  // rank 1 stole it
  EXPECT_TRUE(reserved);
  EXPECT_EQ(p.load(0), 1);
  EXPECT_EQ(p.load(1), 1);
  EXPECT_FALSE(p.place(kCpu, kDefault, {}, failed).reserved);  // no slot left anywhere
  // A retry gives its slot back and takes none, even where one is free.
  p.finished(0, kCpu, a.reserved);
  p.moved(1, 0, kCpu, &reserved, /*take_free_slot=*/false);
  EXPECT_FALSE(reserved);
  EXPECT_TRUE(p.place(kCpu, kDefault, {}, failed).reserved);  // a slot is free again
}

TEST(TaskPlacer, ARankToAvoidIsChosenOnlyWhenNoOtherCanRunIt) {
  sched::ClusterView view = cluster(1, 3);
  TaskPlacer p(view, 0);
  FailedRanks failed(3);
  EXPECT_EQ(p.overflow_rank(kCpu, kDefault, failed, /*avoid=*/0), 1);
  failed.add(1);
  failed.add(2);
  EXPECT_EQ(p.overflow_rank(kCpu, kDefault, failed, /*avoid=*/0), 0);
}

TEST(TaskPlacer, LargeArgumentsDrawTheTaskToTheirHolder) {
  sched::ClusterView view = cluster(2, 2);
  TaskPlacer p(view, 0);
  FailedRanks failed(4);
  TaskPlacer::Placed t = p.place(kCpu, kDefault, {{3, uint64_t(1) << 30}}, failed);
  EXPECT_EQ(t.rank, 3);
  EXPECT_TRUE(t.reserved);
  // The holder is full: another rank of its node reads the same store.
  EXPECT_EQ(p.place(kCpu, kDefault, {{3, uint64_t(1) << 30}}, failed).rank, 2);
}

}  // namespace
}  // namespace weft::core
