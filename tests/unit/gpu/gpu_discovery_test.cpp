// Discovery on whatever host runs the suite. Here (no driver) it must report zero devices with a
// reason and never crash; on a GPU host every device must be described completely.
#include "gpu/gpu_discovery.hpp"

#include <gtest/gtest.h>

#include "gpu/nvml_fabric.hpp"

namespace weft::gpu {
namespace {

TEST(GpuDiscovery, ZeroDevicesComeWithAReasonNeverACrash) {
  GpuInventory inv = discover_gpus();
  if (!built_with_cuda()) {
    EXPECT_TRUE(inv.devices.empty());
    EXPECT_NE(inv.note.find("without CUDA"), std::string::npos) << inv.note;
  }
  if (inv.devices.empty()) {
    EXPECT_FALSE(inv.note.empty());
  }
  // Asking twice is safe: a failed driver probe leaves no sticky error behind.
  EXPECT_EQ(discover_gpus().devices.size(), inv.devices.size());
}

TEST(GpuDiscovery, DevicesThatExistAreFullyDescribed) {
  GpuInventory inv = discover_gpus();
  for (size_t i = 0; i < inv.devices.size(); ++i) {
    const GpuDevice& d = inv.devices[i];
    EXPECT_EQ(d.index, static_cast<int>(i));
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.total_memory, 0u);
    EXPECT_EQ(d.uuid.size(), 40u) << d.uuid;
    EXPECT_EQ(d.pci_bus_id.size(), 12u) << d.pci_bus_id;
  }
}

TEST(GpuDiscovery, UuidFormatMatchesNvidiaSmi) {
  const unsigned char b[16] = {0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xa, 0xb};
  EXPECT_EQ(format_gpu_uuid(b), "GPU-deadbeef-0001-0203-0405-060708090a0b");
}

TEST(NvmlFabric, ProbeAnswersWithRecordsOrAReason) {
  std::string note;
  std::vector<FabricRecord> records = probe_nvml_fabric(&note);
  if (records.empty()) {
    EXPECT_FALSE(note.empty());
  }
  for (const auto& r : records) EXPECT_EQ(r.gpu.rfind("nvml:", 0), 0u);
}

}  // namespace
}  // namespace weft::gpu
