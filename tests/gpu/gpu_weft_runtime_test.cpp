// GPUs through the whole runtime: the rank's "GPU" resource and device ids come from discovery
// (so assigned_gpus() and bundles() name devices cudaSetDevice accepts), and weft::nccl_gang
// forms a communicator over the actors of a group's GPU bundles, which then all-reduces for real.
// Every test skips (printing WEFT_NO_GPU_VISIBLE) where no GPU is visible.
#include <gtest/gtest.h>
#include <weft/nccl.hpp>
#include <weft/weft.hpp>

#include <chrono>
#include <numeric>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"

using namespace std::chrono_literals;
using weft::gpu::testing::DeviceFloats;
using weft::gpu::testing::Stream;

namespace {

int visible_devices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::vector<int> gpu_task_devices() { return weft::assigned_gpus(); }

// A gang member: joins the gang of its group, then all-reduces (sum) a vector of `value`s.
class GangMember {
 public:
  explicit GangMember(weft::PlacementGroup pg) : pg_(pg) {}
  // The summed vector, then its member index and the gang size.
  std::vector<float> join_and_sum(float value, int n) {
    weft::NcclGang gang = weft::nccl_gang(pg_, {.timeout = 60s});
    if (cudaSetDevice(gang.device()) != cudaSuccess) throw weft::Error("cudaSetDevice failed");
    DeviceFloats buf(n);
    Stream stream;
    if (!buf.upload(std::vector<float>(n, value))) throw weft::Error("upload failed");
    gang.check(ncclAllReduce(buf.get(), buf.get(), n, ncclFloat, ncclSum, weft::nccl_comm(gang),
                             stream.get()),
               "ncclAllReduce");
    if (cudaStreamSynchronize(stream.get()) != cudaSuccess) throw weft::Error("sync failed");
    std::vector<float> out = buf.download();
    out.push_back(static_cast<float>(gang.member()));
    out.push_back(static_cast<float>(gang.size()));
    return out;
  }
  std::vector<int> devices() const { return weft::assigned_gpus(); }

 private:
  weft::PlacementGroup pg_;
};

}  // namespace

WEFT_REMOTE(gpu_task_devices);
WEFT_ACTOR(GangMember, weft::PlacementGroup);
WEFT_REMOTE(&GangMember::join_and_sum);
WEFT_REMOTE(&GangMember::devices);

class GpuRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    n_ = visible_devices();
    if (n_ == 0) GTEST_SKIP() << "WEFT_NO_GPU_VISIBLE: no CUDA device";
  }
  int n_ = 0;
};

TEST_F(GpuRuntime, GpuTasksAreGivenRealDeviceIds) {
  auto ids = weft::task(gpu_task_devices).options({.num_gpus = 1}).remote().get(60s);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_GE(ids[0], 0);
  EXPECT_LT(ids[0], n_);
  EXPECT_EQ(cudaSetDevice(ids[0]), cudaSuccess);
}

TEST_F(GpuRuntime, BundlesReportTheirDevicesAndOneMemberGangAllReduces) {
  auto pg = weft::placement_group({{{"GPU", 1}}}, weft::Strategy::Pack, {.name = "gang1"});
  ASSERT_TRUE(pg.wait(30s)) << pg.state().reason;
  auto loc = pg.bundles();
  ASSERT_EQ(loc.size(), 1u);
  ASSERT_EQ(loc[0].gpu_ids.size(), 1u);
  EXPECT_LT(loc[0].gpu_ids[0], n_);
  auto m = weft::actor<GangMember>(pg)
               .options({.num_gpus = 1, .placement_group = pg, .bundle_index = 0})
               .remote();
  EXPECT_EQ(m.task(&GangMember::devices).remote().get(30s), loc[0].gpu_ids);
  auto out = m.task(&GangMember::join_and_sum).remote(2.5f, 1024).get(120s);
  ASSERT_EQ(out.size(), 1026u);
  EXPECT_EQ(out[0], 2.5f);
  EXPECT_EQ(out[1023], 2.5f);
  EXPECT_EQ(out[1024], 0.f);  // member
  EXPECT_EQ(out[1025], 1.f);  // size
  weft::kill(m);
  pg.remove();
}

TEST_F(GpuRuntime, TwoMemberGangOnTwoDevicesSums) {
  if (n_ < 2) GTEST_SKIP() << "needs 2 GPUs on this rank, it has " << n_;
  auto pg = weft::placement_group({{{"GPU", 1}}, {{"GPU", 1}}}, weft::Strategy::StrictPack);
  ASSERT_TRUE(pg.wait(30s)) << pg.state().reason;
  std::vector<weft::ActorHandle<GangMember>> members;
  for (int b = 0; b < 2; ++b)
    members.push_back(weft::actor<GangMember>(pg)
                          .options({.num_gpus = 1, .placement_group = pg, .bundle_index = b})
                          .remote());
  std::vector<weft::ObjectRef<std::vector<float>>> sums;
  for (int b = 0; b < 2; ++b)
    sums.push_back(members[b].task(&GangMember::join_and_sum).remote(float(b + 1), 4096));
  for (int b = 0; b < 2; ++b) {
    auto out = sums[b].get(120s);
    ASSERT_EQ(out.size(), 4098u);
    EXPECT_EQ(out[0], 3.f) << "member " << b;
    EXPECT_EQ(out[4096], float(b));
  }
  for (auto& m : members) weft::kill(m);
  pg.remove();
}
