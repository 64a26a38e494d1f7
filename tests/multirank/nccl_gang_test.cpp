// weft::nccl_gang's paths that need no GPU: argument checks, the "built without NCCL" error, a
// member without a GPU, a member 0 that never comes (the id exchange times out, naming what it
// waited for) and a member 0 that cannot make an id (the others fail at once with its reason).
// Forming a real communicator is tests/gpu's job.
#include <gtest/gtest.h>
#include <weft/weft.hpp>

#include <chrono>
#include <filesystem>
#include <string>

using namespace std::chrono_literals;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// One gang member as a task: joins and reports the error it got ("" when it joined).
std::string gang_member(weft::PlacementGroup pg, int member, int size, int device, int timeout_ms,
                        std::string name) {
  try {
    weft::NcclGang g = weft::nccl_gang(pg, {.member = member,
                                            .size = size,
                                            .device = device,
                                            .timeout = std::chrono::milliseconds(timeout_ms),
                                            .name = name});
    return "";
  } catch (const weft::NcclGangError& e) {
    return std::string("NcclGangError: ") + e.what();
  } catch (const weft::Error& e) {
    return std::string("Error: ") + e.what();
  }
}

}  // namespace

WEFT_REMOTE(gang_member);

class NcclGang : public ::testing::Test {
 protected:
  void SetUp() override {
    pg_ = weft::placement_group({{{"CPU", 0.25}}, {{"CPU", 0.25}}}, weft::Strategy::Pack);
    ASSERT_TRUE(pg_.wait(30s)) << pg_.state().reason;
  }
  void TearDown() override { pg_.remove(); }
  std::string member(int m, int size, int device, int timeout_ms, const std::string& name) {
    return weft::task(gang_member)
        .options({.num_cpus = 0.25, .placement_group = pg_, .bundle_index = m % 2})
        .remote(pg_, m, size, device, timeout_ms, name)
        .get(60s);
  }
  weft::PlacementGroup pg_;
};

TEST_F(NcclGang, BadArgumentsAreClearErrors) {
  EXPECT_THROW(weft::nccl_gang(weft::PlacementGroup{}), weft::Error);
  if (!weft::nccl_available()) GTEST_SKIP() << "built without NCCL";
  try {
    weft::nccl_gang(pg_, {.member = 2, .size = 2});
    ADD_FAILURE() << "member 2 of 2 accepted";
  } catch (const weft::Error& e) {
    EXPECT_TRUE(contains(e.what(), "member 2 is out of range for a gang of 2")) << e.what();
  }
  try {
    weft::nccl_gang(pg_);  // the driver runs in no bundle
    ADD_FAILURE() << "a gang member outside the group's bundles accepted";
  } catch (const weft::Error& e) {
    EXPECT_TRUE(contains(e.what(), "does not run in a bundle")) << e.what();
  }
  EXPECT_THROW(weft::nccl_gang(pg_, {.member = 0, .timeout = 0ms}), weft::Error);
}

TEST_F(NcclGang, WithoutNcclTheErrorSaysSo) {
  if (weft::nccl_available()) GTEST_SKIP() << "built with NCCL";
  try {
    weft::nccl_gang(pg_, {.member = 0, .size = 2});
    ADD_FAILURE() << "a gang formed without NCCL";
  } catch (const weft::Error& e) {
    EXPECT_TRUE(contains(e.what(), "built without NCCL")) << e.what();
  }
}

TEST_F(NcclGang, MemberWithoutAGpuIsNamed) {
  if (!weft::nccl_available()) GTEST_SKIP() << "built without NCCL";
  // The tasks ask for no GPU, so assigned_gpus() is empty: the gang names the member.
  std::string err = member(1, 2, -1, 2000, "nogpu");
  EXPECT_TRUE(contains(err, "NcclGangError")) << err;
  EXPECT_TRUE(contains(err, "member 1 of 2")) << err;
  EXPECT_TRUE(contains(err, "no GPU is assigned")) << err;
  EXPECT_TRUE(contains(err, "placement group " + std::to_string(pg_.id()))) << err;
}

TEST_F(NcclGang, MissingMemberZeroTimesOutNamingWhatItWaitedFor) {
  if (!weft::nccl_available()) GTEST_SKIP() << "built without NCCL";
  auto t0 = std::chrono::steady_clock::now();
  std::string err = member(1, 2, /*device=*/0, /*timeout_ms=*/400, "lonely");
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(contains(err, "NcclGangError")) << err;
  EXPECT_TRUE(contains(err, "member 1 of 2")) << err;
  EXPECT_TRUE(contains(err, "timed out")) << err;
  EXPECT_TRUE(contains(err, "waiting for member 0 to publish the NCCL unique id")) << err;
  EXPECT_GE(took, 350ms);
  EXPECT_LT(took, 20s);
}

TEST_F(NcclGang, MemberZeroWithoutAGpuFailsTheOthersAtOnce) {
  if (!weft::nccl_available()) GTEST_SKIP() << "built without NCCL";
  if (std::filesystem::exists("/dev/nvidiactl"))
    GTEST_SKIP() << "this host has an NVIDIA driver: member 0 could make an id";
  auto t0 = std::chrono::steady_clock::now();
  auto zero = weft::task(gang_member)
                  .options({.num_cpus = 0.25, .placement_group = pg_, .bundle_index = 0})
                  .remote(pg_, 0, 2, 0, 20000, "nozero");
  std::string other = member(1, 2, 0, 20000, "nozero");
  std::string first = zero.get(60s);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 15s) << "the others waited for the timeout";
  EXPECT_TRUE(contains(first, "could not create the NCCL unique id")) << first;
  EXPECT_TRUE(contains(other, "member 0 could not create the NCCL unique id")) << other;
  EXPECT_TRUE(contains(other, "member 1 of 2")) << other;
}
