#include "sched/resource_name.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sched/cluster_view.hpp"
#include "sched/resource_set.hpp"

namespace weft::sched {
namespace {

TEST(ResourceName, TheSameTextIsTheSameNameAndOtherTextIsNot) {
  const std::string text = "accel";  // not a literal: interning copies the text
  ResourceName a(text), b("accel"), c("accel2");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.id(), b.id());
  EXPECT_NE(a, c);
  EXPECT_NE(a.id(), c.id());
  EXPECT_EQ(a.str(), "accel");
  EXPECT_EQ(a, std::string_view("accel"));
  EXPECT_EQ(ResourceName(), ResourceName(""));
  EXPECT_EQ(ResourceName::cpu(), ResourceName("CPU"));
  EXPECT_EQ(ResourceName::gpu(), ResourceName("GPU"));
  EXPECT_LT(c.id(), ResourceName::count());
}

TEST(ResourceName, OrdersByTextNotByWhenItWasInterned) {
  ResourceName later("zz-first-interned");
  ResourceName earlier("aa-second-interned");
  EXPECT_LT(later.id(), earlier.id());
  EXPECT_LT(earlier, later);
  // A set keeps text order, so its printed form and its wire bytes do not depend on the order
  // in which this process met the names.
  ResourceSet rs;
  rs.set("zz-first-interned", 1);
  rs.set("aa-second-interned", 2);
  EXPECT_EQ(rs.str(), "{aa-second-interned: 2, zz-first-interned: 1}");
  EXPECT_EQ(ResourceSet::from_bytes(rs.to_bytes()), rs);
}

TEST(ResourceName, ManyNamesFromManyThreadsEachGetOneId) {
  // Past the lock-free list's 32 entries too, from 4 threads at once, each name interned by
  // every thread: one id per text, and every id maps back to its text.
  constexpr int kNames = 200, kThreads = 4;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kNames));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kNames; ++i) {
        const int k = (i * 7 + t * 13) % kNames;  // a different order in each thread
        ids[t][k] = ResourceName("threaded-" + std::to_string(k)).id();
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<uint32_t> distinct;
  for (int i = 0; i < kNames; ++i) {
    for (int t = 1; t < kThreads; ++t) EXPECT_EQ(ids[t][i], ids[0][i]) << "name " << i;
    distinct.insert(ids[0][i]);
    EXPECT_EQ(ResourceName("threaded-" + std::to_string(i)).id(), ids[0][i]);
  }
  EXPECT_EQ(distinct.size(), size_t(kNames));
}

TEST(ResourceName, AClusterViewFindsItsColumnsByNameAndKnowsNoneForALaterName) {
  ClusterView view({{0, 0, 0, {{"CPU", 2}, {"view-only", 1}}, {}},
                    {1, 0, 0, {{"CPU", 2}}, {}}});
  EXPECT_EQ(view.column(ResourceName("view-only")), view.column("view-only"));
  EXPECT_GE(view.column(ResourceName::cpu()), 0);
  const ResourceName later("interned-after-the-view");
  EXPECT_EQ(view.column(later), -1);
  EXPECT_FALSE(view.fits_now(0, ResourceSet{{"interned-after-the-view", 1}}));
  EXPECT_TRUE(view.fits_now(0, ResourceSet{{"view-only", 1}, {"CPU", 1}}));
  view.allocate(0, ResourceSet{{"view-only", 1}});
  EXPECT_FALSE(view.fits_now(0, ResourceSet{{"view-only", 1}}));
  view.release(0, ResourceSet{{"view-only", 1}});
  EXPECT_TRUE(view.fits_now(0, ResourceSet{{"view-only", 1}}));
}

}  // namespace
}  // namespace weft::sched
