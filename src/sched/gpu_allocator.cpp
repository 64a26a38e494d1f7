#include "sched/gpu_allocator.hpp"

#include <algorithm>

#include "common/check.hpp"
#include "sched/resource_set.hpp"

namespace weft::sched {

std::vector<int> GpuGrant::device_ids() const {
  std::vector<int> ids;
  for (const auto& [id, u] : shares) ids.push_back(id);
  return ids;
}

int64_t GpuGrant::units() const {
  int64_t s = 0;
  for (const auto& [id, u] : shares) s += u;
  return s;
}

GpuAllocator::GpuAllocator(const std::vector<int>& device_ids) {
  for (int id : device_ids) devices_.push_back({id, ResourceSet::kUnit, 0});
  std::sort(devices_.begin(), devices_.end(), [](auto& a, auto& b) { return a.id < b.id; });
}

GpuAllocator::GpuAllocator(const GpuGrant& capacity) {
  for (const auto& [id, u] : capacity.shares) devices_.push_back({id, u, 0});
  std::sort(devices_.begin(), devices_.end(), [](auto& a, auto& b) { return a.id < b.id; });
}

GpuAllocator::Device* GpuAllocator::find(int id) {
  for (auto& d : devices_) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

std::optional<GpuGrant> GpuAllocator::allocate(int64_t units) {
  why_not_.clear();
  GpuGrant g;
  if (units <= 0) return g;
  int64_t whole = units / ResourceSet::kUnit, frac = units % ResourceSet::kUnit;
  // Whole GPUs: untouched devices, lowest ids first. A device with a capacity below 1.0 (a
  // bundle's fractional share) is never "whole".
  std::vector<Device*> picked;
  for (auto& d : devices_) {
    if (static_cast<int64_t>(picked.size()) == whole) break;
    if (d.used == 0 && d.capacity >= ResourceSet::kUnit) picked.push_back(&d);
  }
  if (static_cast<int64_t>(picked.size()) < whole) {
    why_not_ = "needs " + std::to_string(whole) + " whole GPU(s) but only " +
               std::to_string(picked.size()) + " of " + std::to_string(devices_.size()) +
               " device(s) are unused";
    return std::nullopt;
  }
  Device* shared = nullptr;
  if (frac > 0) {
    // Best fit among devices not taken whole: least room that still holds the fraction.
    for (auto& d : devices_) {
      if (std::find(picked.begin(), picked.end(), &d) != picked.end()) continue;
      int64_t room = d.capacity - d.used;
      if (room >= frac && (!shared || room < shared->capacity - shared->used)) shared = &d;
    }
    if (!shared) {
      why_not_ = "needs " + ResourceSet::format_units(frac) +
                 " of one GPU but no device has that much room left";
      return std::nullopt;
    }
  }
  for (Device* d : picked) {
    d->used = ResourceSet::kUnit;
    g.shares.emplace_back(d->id, ResourceSet::kUnit);
  }
  if (shared) {
    shared->used += frac;
    g.shares.emplace_back(shared->id, frac);
  }
  return g;
}

void GpuAllocator::release(const GpuGrant& grant) {
  for (const auto& [id, u] : grant.shares) {
    Device* d = find(id);
    WEFT_CHECK(d && d->used >= u) << "GPU release of " << u << " units on device " << id
                                  << " that this allocator did not grant";
    d->used -= u;
  }
}

int64_t GpuAllocator::free_units() const {
  int64_t s = 0;
  for (const auto& d : devices_) s += d.capacity - d.used;
  return s;
}

}  // namespace weft::sched
