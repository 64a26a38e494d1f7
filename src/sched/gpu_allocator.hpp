// GpuAllocator: which GPU devices a request gets on one rank. Whole GPUs get devices to
// themselves; a fractional part shares one device with other fractions (best fit, so fractions
// fill a partly used device before opening a fresh one). A placement-group bundle gets its grant
// once, at prepare, and tasks inside the bundle draw from a GpuAllocator built over that grant,
// so the bundle's device ids stay the same for its whole life.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weft::sched {

struct GpuGrant {
  std::vector<std::pair<int, int64_t>> shares;  // (device id, fixed-point units of it)
  std::vector<int> device_ids() const;
  int64_t units() const;
  bool empty() const { return shares.empty(); }
};

class GpuAllocator {
 public:
  GpuAllocator() = default;
  // Each device holds 1.0 GPU.
  explicit GpuAllocator(const std::vector<int>& device_ids);
  // Devices with explicit capacities (a bundle's grant: its devices and its share of each).
  explicit GpuAllocator(const GpuGrant& capacity);

  // `units` in ResourceSet fixed point (1.0 GPU = ResourceSet::kUnit). Returns nullopt when the
  // devices cannot host it now (too few whole devices free, or no device with enough room for
  // the fraction); why_not() then says which.
  std::optional<GpuGrant> allocate(int64_t units);
  void release(const GpuGrant& grant);
  int64_t free_units() const;
  int num_devices() const { return static_cast<int>(devices_.size()); }
  const std::string& why_not() const { return why_not_; }

 private:
  struct Device {
    int id;
    int64_t capacity, used;
  };
  Device* find(int id);
  std::vector<Device> devices_;  // in id order
  std::string why_not_;
};

}  // namespace weft::sched
