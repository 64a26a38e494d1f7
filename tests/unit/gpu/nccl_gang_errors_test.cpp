// The gang's error paths that need no GPU: argument checks, a host without devices, a build
// without CUDA, and member 0 failing during bootstrap. Each must be a typed error that names the
// member and device. (Forming real gangs: tests/gpu.)
#include <gtest/gtest.h>

#include "gpu/gpu_discovery.hpp"
#include "gpu/nccl_gang.hpp"

namespace weft::gpu {
namespace {

using std::chrono::milliseconds;
const NcclGang::UniqueId kFakeId(NcclGang::kUniqueIdBytes, std::byte{1});

bool host_has_gpu() { return !discover_gpus().devices.empty(); }

void expect_gang_error(const std::function<void()>& f, const std::string& needle, int member,
                       int device) {
  try {
    f();
    FAIL() << "expected GangError containing '" << needle << "'";
  } catch (const GangError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_NE(what.find("member " + std::to_string(member)), std::string::npos) << what;
    EXPECT_NE(what.find("device " + std::to_string(device)), std::string::npos) << what;
    EXPECT_EQ(e.member(), member);
    EXPECT_EQ(e.device(), device);
  }
}

TEST(NcclGangErrors, BadArgumentsAreGangErrors) {
  expect_gang_error([] { NcclGang::join(kFakeId, 0, 0, 0); }, "gang size", 0, 0);
  expect_gang_error([] { NcclGang::join(kFakeId, 2, 2, 1); }, "out of range", 2, 1);
  expect_gang_error([] { NcclGang::join(kFakeId, -1, 2, 0); }, "out of range", -1, 0);
  expect_gang_error([] { NcclGang::join(NcclGang::UniqueId(5), 1, 2, 0); }, "5 bytes", 1, 0);
  expect_gang_error([] { NcclGang::join(kFakeId, 0, 1, 0, milliseconds(0)); }, "timeout", 0, 0);
}

TEST(NcclGangErrors, EmptyIdBlamesMemberZero) {
  expect_gang_error([] { NcclGang::join({}, 1, 2, 0); }, "member 0 could not create", 1, 0);
}

TEST(NcclGangErrors, NoUsableGpuIsAGangErrorNotACrash) {
  if (host_has_gpu()) GTEST_SKIP() << "this host has a GPU; tests/gpu covers it";
  expect_gang_error([] { NcclGang::join(kFakeId, 0, 1, 0, milliseconds(200)); },
                    built_with_cuda() ? "no usable GPU" : "without CUDA", 0, 0);
  EXPECT_THROW(NcclGang::make_unique_id(), GpuError);
}

TEST(NcclGangErrors, DeviceOutOfRangeNamesCudaVisibleDevices) {
  if (!built_with_cuda() || !host_has_gpu()) GTEST_SKIP() << "needs a CUDA build and a GPU";
  int n = static_cast<int>(discover_gpus().devices.size());
  expect_gang_error([n] { NcclGang::join(kFakeId, 0, 1, n); }, "CUDA_VISIBLE_DEVICES", 0, n);
}

TEST(NcclGangErrors, BootstrapStillBroadcastsWhenMemberZeroFails) {
  if (host_has_gpu()) GTEST_SKIP() << "member 0 would succeed on this host";
  int broadcasts = 0;
  auto bcast = [&](const NcclGang::UniqueId& id) {
    ++broadcasts;
    EXPECT_TRUE(id.empty());  // member 0 had nothing to send, and says so by sending nothing
    return id;
  };
  EXPECT_THROW(NcclGang::bootstrap(0, 2, 0, bcast, milliseconds(200)), GpuError);
  EXPECT_EQ(broadcasts, 1);
  // What the other member sees: an empty id, and an error that points at member 0.
  expect_gang_error([&] { NcclGang::bootstrap(1, 2, 0, bcast, milliseconds(200)); },
                    "member 0 could not create", 1, 0);
}

TEST(NcclGangErrors, EmptyGangIsSafeToMoveDestroyAndRefusesWork) {
  NcclGang g;
  EXPECT_FALSE(g);
  NcclGang h = std::move(g);
  EXPECT_EQ(h.comm(), nullptr);
  EXPECT_THROW(h.wait_ready(milliseconds(10)), GangError);
  h.abort();
  EXPECT_FALSE(h);
}

}  // namespace
}  // namespace weft::gpu
