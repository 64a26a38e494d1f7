// Device tests for one process: discovery against the CUDA runtime, NVML fabric probing, a gang
// of one doing a real ncclAllReduce, the init timeout, and (with 2+ GPUs) a two-member gang in
// two threads. Every test skips where no GPU is visible.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>

#include "gpu/gpu_discovery.hpp"
#include "gpu/nccl_gang.hpp"
#include "gpu/nvlink_domain.hpp"
#include "gpu_test_util.hpp"

namespace weft::gpu {
namespace {

using std::chrono::milliseconds;
using testing::DeviceFloats;

// NCCL bootstrap sockets stay on loopback even when the binary is run by hand (CTest sets these
// too); a test must never send traffic to another interface.
const bool kLoopbackOnly = [] {
  setenv("NCCL_SOCKET_IFNAME", "lo", 0);
  setenv("NCCL_IB_DISABLE", "1", 0);
  return true;
}();
using testing::Stream;

class GpuDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    inv_ = discover_gpus();
    if (inv_.devices.empty()) GTEST_SKIP() << "WEFT_NO_GPU_VISIBLE: " << inv_.note;
  }
  GpuInventory inv_;
};

TEST_F(GpuDevice, DiscoveryDescribesEveryVisibleDeviceOnce) {
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  ASSERT_EQ(static_cast<int>(inv_.devices.size()), n);
  std::set<std::string> uuids, buses;
  for (const auto& d : inv_.devices) {
    std::cout << "device " << d.index << ": " << d.name << ", " << (d.total_memory >> 30)
              << " GiB, " << d.pci_bus_id << ", " << d.uuid << ", sm_" << d.cc_major << d.cc_minor
              << "\n";
    EXPECT_GT(d.total_memory, uint64_t{1} << 30);
    EXPECT_GE(d.cc_major, 3);
    uuids.insert(d.uuid);
    buses.insert(d.pci_bus_id);
  }
  EXPECT_EQ(uuids.size(), inv_.devices.size());
  EXPECT_EQ(buses.size(), inv_.devices.size());
}

TEST_F(GpuDevice, NvmlFabricAndDomainResolveWithoutError) {
  std::string note;
  std::vector<FabricRecord> records = probe_nvml_fabric(&note);
  std::cout << "NVML: " << note << "; " << records.size() << " fabric record(s)\n";
  // NVML ignores CUDA_VISIBLE_DEVICES, so it sees at least what CUDA sees (when it loads at all).
  if (!records.empty()) {
    EXPECT_GE(records.size(), inv_.devices.size());
  }
  NvlinkDomain d = resolve_nvlink_domain(Config{}, "this-host", 0);
  std::cout << "NVLink domain: " << d.name << " (" << d.source << "; " << d.note << ")\n";
  EXPECT_TRUE(d.source == "nvml" || d.source == "default") << d.source;
}

TEST_F(GpuDevice, GangOfOneAllReducesInPlace) {
  NcclGang gang = NcclGang::join(NcclGang::make_unique_id(), 0, 1, 0, milliseconds(30000));
  ASSERT_TRUE(gang);
  EXPECT_EQ(gang.size(), 1);
  WEFT_CUDA_OK(cudaSetDevice(gang.device()));
  constexpr size_t kN = 1 << 20;
  std::vector<float> host(kN);
  for (size_t i = 0; i < kN; ++i) host[i] = static_cast<float>(i % 1000) * 0.5f;
  DeviceFloats buf(kN);
  ASSERT_NE(buf.get(), nullptr);
  ASSERT_TRUE(buf.upload(host));
  Stream stream;
  gang.check(ncclAllReduce(buf.get(), buf.get(), kN, ncclFloat, ncclSum, gang.comm(), stream.get()),
             "ncclAllReduce");
  WEFT_CUDA_OK(cudaStreamSynchronize(stream.get()));
  EXPECT_EQ(buf.download(), host);  // the sum over one member is the member's own data
}

TEST_F(GpuDevice, InitTimesOutWhenAMemberNeverJoinsAndAGangFormsAfterwards) {
  const milliseconds limit(1500);
  auto t0 = std::chrono::steady_clock::now();
  try {
    NcclGang::join(NcclGang::make_unique_id(), 0, 2, 0, limit);
    FAIL() << "a gang of 2 with one member must not form";
  } catch (const GangError& e) {
    auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
    std::cout << e.what() << "\n(returned after " << took.count() << " ms)\n";
    std::string what = e.what();
    EXPECT_NE(what.find("timed out"), std::string::npos) << what;
    EXPECT_NE(what.find("member 0 of 2 on device 0"), std::string::npos) << what;
    EXPECT_GE(e.elapsed(), limit);
    EXPECT_LT(took, limit + milliseconds(20000)) << "abort after the deadline must be prompt";
  }
  // The aborted attempt leaves nothing behind that stops the next gang.
  NcclGang again = NcclGang::join(NcclGang::make_unique_id(), 0, 1, 0, milliseconds(30000));
  EXPECT_TRUE(again);
}

TEST_F(GpuDevice, TwoMembersOnTwoDevicesSumTheirValues) {
  if (inv_.devices.size() < 2) GTEST_SKIP() << "needs 2 GPUs, this host has 1";
  NcclGang::UniqueId id = NcclGang::make_unique_id();
  constexpr size_t kN = 1 << 16;
  std::vector<float> result[2];
  std::string errors[2];
  std::vector<std::thread> members;
  for (int m = 0; m < 2; ++m) {
    members.emplace_back([&, m] {
      try {
        NcclGang gang = NcclGang::join(id, m, 2, m, milliseconds(30000));
        cudaSetDevice(m);
        DeviceFloats buf(kN);
        buf.upload(std::vector<float>(kN, static_cast<float>(m + 1)));
        Stream stream;
        gang.check(
            ncclAllReduce(buf.get(), buf.get(), kN, ncclFloat, ncclSum, gang.comm(), stream.get()),
            "ncclAllReduce");
        cudaStreamSynchronize(stream.get());
        result[m] = buf.download();
      } catch (const std::exception& e) {
        errors[m] = e.what();
      }
    });
  }
  for (auto& t : members) t.join();
  for (int m = 0; m < 2; ++m) {
    EXPECT_EQ(errors[m], "") << "member " << m;
    EXPECT_EQ(result[m], std::vector<float>(kN, 3.0f)) << "member " << m;
  }
}

TEST_F(GpuDevice, DeviceOutOfRangeIsAGangError) {
  int n = static_cast<int>(inv_.devices.size());
  EXPECT_THROW(NcclGang::join(NcclGang::make_unique_id(), 0, 1, n), GangError);
}

}  // namespace
}  // namespace weft::gpu
