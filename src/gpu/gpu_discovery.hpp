// What GPUs this process can see. The CUDA runtime is the source of truth for indexes (it applies
// CUDA_VISIBLE_DEVICES and its ordering), so device `index` here is what cudaSetDevice takes.
// A host without a driver or without GPUs is normal: it reports zero devices, never an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft::gpu {

struct GpuDevice {
  int index = -1;             // CUDA ordinal inside this process's visible set
  std::string name;           // "NVIDIA H200"
  uint64_t total_memory = 0;  // bytes
  std::string pci_bus_id;     // "0000:1B:00.0" (domain:bus:device.function)
  std::string uuid;           // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints
  int cc_major = 0, cc_minor = 0;
};

struct GpuInventory {
  std::vector<GpuDevice> devices;
  // Why the list is empty (or a note about it): "built without CUDA", "no CUDA driver: ...".
  std::string note;
  // CUDA_VISIBLE_DEVICES as this process saw it ("" when unset), for logs and `weft status`.
  std::string cuda_visible_devices;
};

// True when this build has the CUDA/NCCL parts (WEFT_WITH_CUDA and the toolkit was found).
bool built_with_cuda();

// Lists the devices visible to this process. Never throws for missing drivers or devices.
GpuInventory discover_gpus();

// "GPU-" + canonical 8-4-4-4-12 hex form of a 16-byte UUID (what nvidia-smi -L shows).
std::string format_gpu_uuid(const unsigned char bytes[16]);

}  // namespace weft::gpu
