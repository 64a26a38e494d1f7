// GPU device assignment and the per-rank two-phase ledger.
#include <gtest/gtest.h>

#include "sched/gpu_allocator.hpp"
#include "sched/pg_ledger.hpp"

namespace weft::sched {
namespace {

constexpr int64_t kU = ResourceSet::kUnit;

TEST(GpuAllocator, WholeGpusGetTheirOwnDevices) {
  GpuAllocator a({4, 5, 6, 7});
  auto g = a.allocate(2 * kU);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->device_ids(), (std::vector<int>{4, 5}));
  auto h = a.allocate(3 * kU);
  EXPECT_FALSE(h);
  EXPECT_NE(a.why_not().find("needs 3 whole GPU(s) but only 2 of 4"), std::string::npos)
      << a.why_not();
  a.release(*g);
  EXPECT_EQ(a.free_units(), 4 * kU);
}

TEST(GpuAllocator, FractionsShareOneDeviceBestFit) {
  GpuAllocator a({0, 1});
  auto q1 = a.allocate(kU / 4), q2 = a.allocate(kU / 4), half = a.allocate(kU / 2);
  ASSERT_TRUE(q1 && q2 && half);
  EXPECT_EQ(q1->device_ids(), (std::vector<int>{0}));
  EXPECT_EQ(q2->device_ids(), (std::vector<int>{0}));
  EXPECT_EQ(half->device_ids(), (std::vector<int>{0}));  // fills device 0 exactly
  auto whole = a.allocate(kU);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->device_ids(), (std::vector<int>{1}));
  EXPECT_FALSE(a.allocate(kU / 10));
  EXPECT_NE(a.why_not().find("0.1 of one GPU"), std::string::npos) << a.why_not();
  a.release(*q1);
  auto again = a.allocate(kU / 5);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->device_ids(), (std::vector<int>{0}));
}

TEST(GpuAllocator, MixedWholeAndFraction) {
  GpuAllocator a({0, 1, 2});
  auto g = a.allocate(kU + kU / 2);  // 1.5 GPUs
  ASSERT_TRUE(g);
  EXPECT_EQ(g->units(), kU + kU / 2);
  EXPECT_EQ(g->device_ids(), (std::vector<int>{0, 1}));
  EXPECT_FALSE(a.allocate(2 * kU));  // only device 2 is untouched
  EXPECT_TRUE(a.allocate(kU / 2));   // the other half of device 1
}

TEST(PgLedger, PrepareCommitRemove) {
  PgLedger l(3, {{"CPU", 8}, {"GPU", 2}}, {0, 1});
  auto p = l.prepare(7, 0, {{"CPU", 2}, {"GPU", 1}});
  ASSERT_TRUE(p.ok) << p.why;
  EXPECT_EQ(p.gpu_ids, (std::vector<int>{0}));
  auto again = l.prepare(7, 0, {{"CPU", 2}, {"GPU", 1}});  // retried message
  EXPECT_TRUE(again.ok);
  EXPECT_EQ(again.gpu_ids, p.gpu_ids);
  EXPECT_EQ(l.available(), (ResourceSet{{"CPU", 6}, {"GPU", 1}}));
  EXPECT_FALSE(l.is_committed(7, 0));
  EXPECT_TRUE(l.commit(7));
  EXPECT_TRUE(l.is_committed(7, 0));
  EXPECT_EQ(l.rollback(7), 0);  // committed bundles are not rolled back
  EXPECT_FALSE(l.commit(8));
  EXPECT_EQ(l.remove(7), 1);
  EXPECT_EQ(l.available(), l.total());
  EXPECT_EQ(l.free_gpu_units(), 2 * kU);
}

TEST(PgLedger, RollbackAfterAFailedPrepareIsExact) {
  PgLedger l(0, {{"CPU", 8}, {"GPU", 4}, {"memory", 1000}}, {0, 1, 2, 3});
  auto plain = l.acquire({{"CPU", 1}, {"GPU", 0.5}});  // a task holds part of device 0
  ASSERT_TRUE(plain);
  const ResourceSet before = l.available();
  const int64_t gpu_before = l.free_gpu_units();
  ASSERT_TRUE(l.prepare(9, 0, {{"CPU", 2}, {"GPU", 1}, {"memory", 300}}).ok);
  ASSERT_TRUE(l.prepare(9, 1, {{"CPU", 2}, {"GPU", 1.5}}).ok);
  auto bad = l.prepare(9, 2, {{"CPU", 2}, {"GPU", 2}});
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.why.find("rank 0 has GPU: 1 free, 2 needed"), std::string::npos) << bad.why;
  EXPECT_EQ(l.rollback(9), 2);
  EXPECT_EQ(l.available(), before);
  EXPECT_EQ(l.free_gpu_units(), gpu_before);
  EXPECT_EQ(l.num_bundles(), 0u);
  // The same devices come back: three whole GPUs are free again (device 0 is shared).
  auto three = l.prepare(10, 0, {{"GPU", 3}});
  ASSERT_TRUE(three.ok) << three.why;
  EXPECT_EQ(three.gpu_ids, (std::vector<int>{1, 2, 3}));
}

TEST(PgLedger, FragmentedGpusAreReportedNotOverbooked) {
  PgLedger l(1, {{"GPU", 2}}, {0, 1});
  auto a = l.acquire({{"GPU", 0.5}});
  auto b = l.prepare(1, 0, {{"GPU", 0.75}});
  ASSERT_TRUE(a && b.ok);
  EXPECT_EQ(b.gpu_ids, (std::vector<int>{1}));  // device 0 has only 0.5 room
  auto c = l.prepare(1, 1, {{"GPU", 0.6}});     // 0.75 free in total, but split 0.5 + 0.25
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.why.find("0.6 of one GPU"), std::string::npos) << c.why;
}

TEST(PgLedger, TasksInsideABundleUseItsDevices) {
  PgLedger l(0, {{"CPU", 8}, {"GPU", 4}}, {0, 1, 2, 3});
  ASSERT_TRUE(l.acquire({{"GPU", 1}}));  // device 0 busy
  auto p = l.prepare(5, 0, {{"CPU", 4}, {"GPU", 2}});
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.gpu_ids, (std::vector<int>{1, 2}));
  EXPECT_FALSE(l.acquire_in_bundle(5, 0, {{"GPU", 1}}));  // not committed yet
  l.commit(5);
  auto t1 = l.acquire_in_bundle(5, 0, {{"CPU", 1}, {"GPU", 0.5}});
  auto t2 = l.acquire_in_bundle(5, 0, {{"CPU", 1}, {"GPU", 1}});
  ASSERT_TRUE(t1 && t2);
  EXPECT_EQ(t1->device_ids(), (std::vector<int>{1}));
  EXPECT_EQ(t2->device_ids(), (std::vector<int>{2}));
  EXPECT_FALSE(l.acquire_in_bundle(5, 0, {{"GPU", 1}}));  // bundle has 0.5 left
  EXPECT_FALSE(l.acquire_in_bundle(5, 0, {{"CPU", 3}}));
  l.release_in_bundle(5, 0, {{"CPU", 1}, {"GPU", 1}}, *t2);
  EXPECT_TRUE(l.acquire_in_bundle(5, 0, {{"GPU", 1}}));
  // Plain work never touches the bundle's reservation.
  EXPECT_EQ(l.available(), (ResourceSet{{"CPU", 4}, {"GPU", 1}}));
}

}  // namespace
}  // namespace weft::sched
