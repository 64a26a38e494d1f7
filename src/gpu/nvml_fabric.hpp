// NVLink fabric membership from NVML (GB200/GB300 NVL72 and other multi-node NVLink systems):
// GPUs that report the same fabric cluster UUID and clique id share one NVLink domain.
// NVML is loaded with dlopen("libnvidia-ml.so.1"), never linked: hosts without a driver, and
// builds without CUDA, still work and simply find no fabric.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace weft::gpu {

// What one GPU's NVML reports about its fabric registration.
struct FabricRecord {
  std::string gpu;         // "nvml:0" (for messages)
  bool supported = false;  // the call exists and the GPU has a fabric
  bool completed = false;  // registration finished (state COMPLETED)
  int status = 0;          // NVML status of the registration (0 = success)
  std::array<unsigned char, 16> cluster_uuid{};
  unsigned int clique_id = 0;
};

// Reads the fabric info of every GPU on the node (NVML ignores CUDA_VISIBLE_DEVICES, which is
// right: the domain is a property of the node). Empty when NVML or the call is unavailable;
// `note` then says why.
std::vector<FabricRecord> probe_nvml_fabric(std::string* note);

// The node's domain from its GPUs' records: "nvl-<cluster uuid>-<clique>" from the first GPU
// whose registration completed successfully with a non-zero cluster UUID; nullopt when none did.
// GPUs that disagree are reported in `note` (the first one wins, so all ranks of a node agree).
std::optional<std::string> domain_from_fabric(const std::vector<FabricRecord>& records,
                                              std::string* note);

using FabricProbe = std::function<std::vector<FabricRecord>(std::string* note)>;

}  // namespace weft::gpu
