#include "gpu/nvml_fabric.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>

#include "common/log.hpp"

namespace weft::gpu {
namespace {

// The few NVML declarations used here, copied from nvml.h (ABI-stable, versioned structs), so
// that no NVML header or library is needed at build time.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned char kFabricStateNotSupported = 0;
constexpr unsigned char kFabricStateCompleted = 3;

struct FabricInfoV1 {
  unsigned char cluster_uuid[16];
  nvmlReturn_t status;
  unsigned int clique_id;
  unsigned char state;
};
struct FabricInfoV2 {
  unsigned int version;
  unsigned char cluster_uuid[16];
  nvmlReturn_t status;
  unsigned int clique_id;
  unsigned char state;
  unsigned int health_mask;
};
// NVML_STRUCT_VERSION(GpuFabricInfo, 2) == 0x02000024.
constexpr unsigned int kFabricInfoV2 = sizeof(FabricInfoV2) | (2u << 24);
static_assert(kFabricInfoV2 == 0x02000024u, "nvmlGpuFabricInfo_v2_t layout");

// Owns the dlopen handle and the nvmlInit/nvmlShutdown pair.
class NvmlLibrary {
 public:
  NvmlLibrary() {
    handle_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* e = dlerror();
      error_ = std::string("NVML not available (") + (e ? e : "dlopen failed") + ")";
      return;
    }
    auto init = sym<nvmlReturn_t (*)()>("nvmlInit_v2");
    if (!init) init = sym<nvmlReturn_t (*)()>("nvmlInit");
    if (!init) {
      error_ = "NVML has no nvmlInit";
      return;
    }
    if (nvmlReturn_t rc = init(); rc != kNvmlSuccess) {
      error_ = "nvmlInit failed: " + describe(rc);
      return;
    }
    initialized_ = true;
  }
  ~NvmlLibrary() {
    if (initialized_) {
      if (auto shutdown = sym<nvmlReturn_t (*)()>("nvmlShutdown")) shutdown();
    }
    if (handle_) dlclose(handle_);
  }
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  bool ok() const { return initialized_; }
  const std::string& error() const { return error_; }

  template <class F>
  F sym(const char* name) const {
    return handle_ ? reinterpret_cast<F>(dlsym(handle_, name)) : nullptr;
  }
  std::string describe(nvmlReturn_t rc) const {
    auto str = sym<const char* (*)(nvmlReturn_t)>("nvmlErrorString");
    return std::string(str ? str(rc) : "error") + " (" + std::to_string(rc) + ")";
  }

 private:
  void* handle_ = nullptr;
  bool initialized_ = false;
  std::string error_;
};

std::string hex_uuid(const std::array<unsigned char, 16>& b) {
  char s[40];
  std::snprintf(s, sizeof(s),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return s;
}

}  // namespace

std::vector<FabricRecord> probe_nvml_fabric(std::string* note) {
  std::vector<FabricRecord> out;
  NvmlLibrary nvml;
  if (!nvml.ok()) {
    if (note) *note = nvml.error();
    return out;
  }
  auto count_fn = nvml.sym<nvmlReturn_t (*)(unsigned int*)>("nvmlDeviceGetCount_v2");
  auto handle_fn =
      nvml.sym<nvmlReturn_t (*)(unsigned int, nvmlDevice_t*)>("nvmlDeviceGetHandleByIndex_v2");
  auto info_v =
      nvml.sym<nvmlReturn_t (*)(nvmlDevice_t, FabricInfoV2*)>("nvmlDeviceGetGpuFabricInfoV");
  auto info_v1 =
      nvml.sym<nvmlReturn_t (*)(nvmlDevice_t, FabricInfoV1*)>("nvmlDeviceGetGpuFabricInfo");
  if (!count_fn || !handle_fn || (!info_v && !info_v1)) {
    if (note) *note = "this NVML has no GPU fabric API (driver older than R530)";
    return out;
  }
  unsigned int count = 0;
  if (nvmlReturn_t rc = count_fn(&count); rc != kNvmlSuccess) {
    if (note) *note = "nvmlDeviceGetCount failed: " + nvml.describe(rc);
    return out;
  }
  for (unsigned int i = 0; i < count; ++i) {
    FabricRecord r;
    r.gpu = "nvml:" + std::to_string(i);
    nvmlDevice_t dev = nullptr;
    if (handle_fn(i, &dev) != kNvmlSuccess) continue;
    nvmlReturn_t rc;
    unsigned char state = kFabricStateNotSupported;
    if (info_v) {
      FabricInfoV2 info{};
      info.version = kFabricInfoV2;
      rc = info_v(dev, &info);
      if (rc == kNvmlSuccess) {
        std::copy(std::begin(info.cluster_uuid), std::end(info.cluster_uuid),
                  r.cluster_uuid.begin());
        r.status = info.status;
        r.clique_id = info.clique_id;
        state = info.state;
      }
    } else {
      FabricInfoV1 info{};
      rc = info_v1(dev, &info);
      if (rc == kNvmlSuccess) {
        std::copy(std::begin(info.cluster_uuid), std::end(info.cluster_uuid),
                  r.cluster_uuid.begin());
        r.status = info.status;
        r.clique_id = info.clique_id;
        state = info.state;
      }
    }
    // NOT_SUPPORTED (rc or state) is the normal answer on PCIe and single-node NVSwitch systems.
    r.supported = rc == kNvmlSuccess && state != kFabricStateNotSupported;
    r.completed = r.supported && state == kFabricStateCompleted;
    if (rc != kNvmlSuccess) {
      WEFT_LOG(Debug) << "NVML fabric info of GPU " << i << ": " << nvml.describe(rc);
    }
    out.push_back(r);
  }
  if (note) *note = "NVML reports " + std::to_string(count) + " GPU(s)";
  return out;
}

std::optional<std::string> domain_from_fabric(const std::vector<FabricRecord>& records,
                                              std::string* note) {
  const FabricRecord* chosen = nullptr;
  int pending = 0, failed = 0, unsupported = 0, disagree = 0;
  for (const FabricRecord& r : records) {
    if (!r.supported) {
      ++unsupported;
      continue;
    }
    if (!r.completed) {
      ++pending;
      continue;
    }
    bool zero = true;
    for (unsigned char c : r.cluster_uuid) zero = zero && c == 0;
    if (r.status != 0 || zero) {
      ++failed;
      continue;
    }
    if (!chosen) {
      chosen = &r;
    } else if (r.cluster_uuid != chosen->cluster_uuid || r.clique_id != chosen->clique_id) {
      ++disagree;
    }
  }
  std::string why;
  if (records.empty()) why = "no GPU fabric records";
  if (unsupported)
    why += std::to_string(unsupported) + " GPU(s) without multi-node NVLink fabric; ";
  if (pending) why += std::to_string(pending) + " GPU(s) with fabric registration not completed; ";
  if (failed) why += std::to_string(failed) + " GPU(s) with failed fabric registration; ";
  if (disagree) {
    why += std::to_string(disagree) + " GPU(s) in another clique than " + chosen->gpu +
           " (its clique is used); ";
  }
  if (note) *note = why;
  if (!chosen) return std::nullopt;
  return "nvl-" + hex_uuid(chosen->cluster_uuid) + "-" + std::to_string(chosen->clique_id);
}

}  // namespace weft::gpu
