#include "gpu/gpu_assignment.hpp"

#include <gtest/gtest.h>

#include "weft/errors.hpp"

namespace weft::gpu {
namespace {

using V = std::vector<int>;

TEST(SplitGpus, EvenSplitGivesEachRankItsBlock) {
  EXPECT_EQ(split_gpus(8, 0, 4, -1).devices, (V{0, 1}));
  EXPECT_EQ(split_gpus(8, 3, 4, -1).devices, (V{6, 7}));
  EXPECT_EQ(split_gpus(8, 3, 4, -1).gpus, 2);
}

TEST(SplitGpus, LeftoverDevicesGoToTheFirstRanks) {
  EXPECT_EQ(split_gpus(3, 0, 2, -1).devices, (V{0, 1}));
  EXPECT_EQ(split_gpus(3, 1, 2, -1).devices, (V{2}));
}

TEST(SplitGpus, MoreRanksThanDevicesShareInEqualFractions) {
  // 4 ranks, 2 devices: ranks 0,1 -> device 0 and ranks 2,3 -> device 1, half a GPU each.
  EXPECT_EQ(split_gpus(2, 1, 4, -1).devices, (V{0}));
  EXPECT_EQ(split_gpus(2, 2, 4, -1).devices, (V{1}));
  EXPECT_DOUBLE_EQ(split_gpus(2, 2, 4, -1).gpus, 0.5);
  // 3 ranks, 2 devices: ranks 0 and 1 share device 0, rank 2 has device 1 alone.
  EXPECT_DOUBLE_EQ(split_gpus(2, 0, 3, -1).gpus, 0.5);
  EXPECT_EQ(split_gpus(2, 2, 3, -1).devices, (V{1}));
  EXPECT_DOUBLE_EQ(split_gpus(2, 2, 3, -1).gpus, 1.0);
}

TEST(SplitGpus, NoDevicesOrZeroPerRankGiveNothing) {
  EXPECT_TRUE(split_gpus(0, 0, 2, -1).devices.empty());
  EXPECT_EQ(split_gpus(0, 0, 2, -1).gpus, 0);
  EXPECT_TRUE(split_gpus(4, 1, 2, 0).devices.empty());
}

TEST(SplitGpus, ExplicitGpusPerRank) {
  EXPECT_EQ(split_gpus(8, 1, 2, 2).devices, (V{2, 3}));
  EXPECT_EQ(split_gpus(8, 1, 2, 2).gpus, 2);
  EXPECT_EQ(split_gpus(2, 3, 4, 0.5).devices, (V{1}));
  EXPECT_DOUBLE_EQ(split_gpus(2, 3, 4, 0.5).gpus, 0.5);
}

TEST(SplitGpus, ImpossibleRequestsAreConfigErrorsSayingWhy) {
  try {
    split_gpus(4, 0, 3, 2);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("needs 6 GPUs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has 4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(split_gpus(4, 0, 2, 1.5), ConfigError);
  EXPECT_THROW(split_gpus(4, 0, 2, 0.3), ConfigError);
  EXPECT_THROW(split_gpus(1, 0, 3, 0.5), ConfigError);  // 3 ranks at 2 per GPU need 2 GPUs
}

TEST(PlanRankGpus, IdenticalViewsAreSplit) {
  std::vector<std::vector<std::string>> views(2, {"GPU-a", "GPU-b", "GPU-c", "GPU-d"});
  RankGpus r = plan_rank_gpus(views, 1, -1);
  EXPECT_EQ(r.devices, (V{2, 3}));
  EXPECT_NE(r.how.find("even split"), std::string::npos) << r.how;
}

TEST(PlanRankGpus, LauncherBoundViewsAreKeptAndSharedDevicesCountInPart) {
  std::vector<std::vector<std::string>> views = {{"GPU-a"}, {"GPU-b"}, {"GPU-b"}};
  RankGpus r0 = plan_rank_gpus(views, 0, -1);
  EXPECT_EQ(r0.devices, (V{0}));
  EXPECT_DOUBLE_EQ(r0.gpus, 1.0);
  RankGpus r2 = plan_rank_gpus(views, 2, 1);
  EXPECT_EQ(r2.devices, (V{0}));
  EXPECT_DOUBLE_EQ(r2.gpus, 0.5);
  EXPECT_NE(r2.how.find("launcher-bound"), std::string::npos) << r2.how;
}

TEST(GpusPerRankFrom, UnsetMeansEvenSplitAndNegativeIsAnError) {
  Config c;
  EXPECT_LT(gpus_per_rank_from(c), 0);
  c.set("gpus_per_rank", "2");
  EXPECT_EQ(gpus_per_rank_from(c), 2);
  c.set("gpus_per_rank", "-1");
  EXPECT_THROW(gpus_per_rank_from(c), ConfigError);
}

}  // namespace
// --- plan_host_gpus: the startup plan over every rank's (host, visible devices) ---------------

std::vector<RankGpuView> two_hosts_two_ranks_four_gpus() {
  std::vector<std::string> a{"GPU-a0", "GPU-a1", "GPU-a2", "GPU-a3"};
  std::vector<std::string> b{"GPU-b0", "GPU-b1", "GPU-b2", "GPU-b3"};
  return {{"hostA", a}, {"hostA", a}, {"hostB", b}, {"hostB", b}};
}

TEST(PlanHostGpus, RanksShareOnlyTheDevicesOfTheirOwnHost) {
  auto views = two_hosts_two_ranks_four_gpus();
  EXPECT_EQ(plan_host_gpus(views, 0, -1).devices, (V{0, 1}));
  EXPECT_EQ(plan_host_gpus(views, 1, -1).devices, (V{2, 3}));
  EXPECT_EQ(plan_host_gpus(views, 2, -1).devices, (V{0, 1}));  // first rank of host B
  EXPECT_EQ(plan_host_gpus(views, 3, -1).gpus, 2);
  EXPECT_EQ(plan_host_gpus(views, 3, 1).devices, (V{1}));  // gpus_per_rank=1: one each
}

TEST(PlanHostGpus, NoGpuAnywhereIsZeroNotAnError) {
  std::vector<RankGpuView> views{{"h", {}}, {"h", {}}};
  RankGpus g = plan_host_gpus(views, 1, -1);
  EXPECT_TRUE(g.devices.empty());
  EXPECT_EQ(g.gpus, 0);
  EXPECT_NE(g.how.find("no GPU"), std::string::npos) << g.how;
  // Even when a GPU count per rank is configured: there is simply nothing to split.
  EXPECT_EQ(plan_host_gpus(views, 0, 2).gpus, 0);
}

TEST(PlanHostGpus, GpusPerRankZeroTakesNone) {
  auto views = two_hosts_two_ranks_four_gpus();
  EXPECT_TRUE(plan_host_gpus(views, 1, 0).devices.empty());
  EXPECT_EQ(plan_host_gpus(views, 1, 0).gpus, 0);
}

TEST(PlanHostGpus, LauncherBoundDevicesAreKeptPerRank) {
  // CUDA_VISIBLE_DEVICES set per rank by the launcher: each rank sees its own device as 0.
  std::vector<RankGpuView> views{{"h", {"GPU-x"}}, {"h", {"GPU-y"}}};
  EXPECT_EQ(plan_host_gpus(views, 1, -1).devices, (V{0}));
  EXPECT_EQ(plan_host_gpus(views, 1, -1).gpus, 1);
}

TEST(PlanHostGpus, TooManyGpusPerRankIsAConfigError) {
  auto views = two_hosts_two_ranks_four_gpus();
  EXPECT_THROW(plan_host_gpus(views, 0, 3), ConfigError);
}

TEST(RankGpuView, BytesRoundTrip) {
  RankGpuView v{"node-17", {"GPU-1", "GPU-2"}};
  RankGpuView w = RankGpuView::from_bytes(v.to_bytes());
  EXPECT_EQ(w.host, "node-17");
  EXPECT_EQ(w.uuids, v.uuids);
  EXPECT_TRUE(RankGpuView::from_bytes(RankGpuView{"h", {}}.to_bytes()).uuids.empty());
}

}  // namespace weft::gpu
