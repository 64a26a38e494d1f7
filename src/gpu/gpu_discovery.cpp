#include "gpu/gpu_discovery.hpp"

#include <cstdio>
#include <cstdlib>

#include "common/log.hpp"

#if WEFT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace weft::gpu {

bool built_with_cuda() { return WEFT_HAVE_CUDA != 0; }

std::string format_gpu_uuid(const unsigned char b[16]) {
  char s[64];
  std::snprintf(s, sizeof(s),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return s;
}

GpuInventory discover_gpus() {
  GpuInventory inv;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) inv.cuda_visible_devices = v;
#if WEFT_HAVE_CUDA
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // No driver, no device, or a driver older than the runtime: all mean "0 GPUs here". The
    // error is cleared so it cannot surface later in an unrelated CUDA call.
    (void)cudaGetLastError();
    inv.note = std::string("no usable CUDA device: ") + cudaGetErrorName(err) + " (" +
               cudaGetErrorString(err) + ")";
    WEFT_LOG(Debug) << "gpu discovery: " << inv.note;
    return inv;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    err = cudaGetDeviceProperties(&p, i);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      WEFT_LOG(Warn) << "gpu discovery: skipping CUDA device " << i << ": "
                     << cudaGetErrorString(err);
      continue;
    }
    GpuDevice d;
    d.index = i;
    d.name = p.name;
    d.total_memory = p.totalGlobalMem;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.uuid = format_gpu_uuid(reinterpret_cast<const unsigned char*>(p.uuid.bytes));
    char bus[32] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), i) == cudaSuccess) {
      d.pci_bus_id = bus;
    } else {
      (void)cudaGetLastError();
    }
    inv.devices.push_back(std::move(d));
  }
  if (count == 0) inv.note = "the CUDA driver reports no devices";
#else
  inv.note = "weft was built without CUDA (WEFT_WITH_CUDA=OFF or CUDA/NCCL not found)";
#endif
  return inv;
}

}  // namespace weft::gpu
