// PgLedger: one rank's exact account of its own resources — what plain tasks and actors hold,
// and what placement-group bundles have reserved — with the GPU devices behind each. The
// runtime turns the head's two-phase protocol into calls on it:
//   prepare(pg, bundle, need) on every rank of the plan → all ok: commit(pg) on each
//                                                         → any not ok: rollback(pg) on each
// Rollback returns exactly what prepare took (the same units, the same devices), so a failed
// creation leaves no trace; remove(pg) frees a committed group the same way.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sched/gpu_allocator.hpp"
#include "sched/resource_set.hpp"

namespace weft::sched {

class PgLedger {
 public:
  struct Prepared {
    bool ok = false;
    std::string why;           // when !ok: what was missing, in a sentence
    std::vector<int> gpu_ids;  // when ok: the bundle's devices, stable until removal
  };

  PgLedger(int rank, ResourceSet total, std::vector<int> gpu_ids);

  // Phase one: reserve `need` for bundle `bundle` of group `pg` unless already prepared (then the
  // same answer again: a retried message must not reserve twice).
  Prepared prepare(uint64_t pg, int bundle, const ResourceSet& need);
  // Phase two: the group's prepared bundles on this rank become committed. False if none.
  bool commit(uint64_t pg);
  // Undo every prepared, uncommitted bundle of `pg` on this rank. Returns how many.
  int rollback(uint64_t pg);
  // Release every bundle of `pg` (committed or not) and what tasks inside them held.
  int remove(uint64_t pg);

  // Plain tasks and actors: acquire from what no bundle reserved.
  std::optional<GpuGrant> acquire(const ResourceSet& need);
  void release(const ResourceSet& need, const GpuGrant& gpus);
  // Tasks inside a committed bundle draw from the bundle's reservation and devices.
  std::optional<GpuGrant> acquire_in_bundle(uint64_t pg, int bundle, const ResourceSet& need);
  void release_in_bundle(uint64_t pg, int bundle, const ResourceSet& need, const GpuGrant& gpus);

  int rank() const { return rank_; }
  const ResourceSet& total() const { return total_; }
  // Free for plain tasks (total − plain use − every bundle's reservation): the load report.
  const ResourceSet& available() const { return avail_; }
  bool is_committed(uint64_t pg, int bundle) const;
  size_t num_bundles() const { return bundles_.size(); }
  int64_t free_gpu_units() const { return gpus_.free_units(); }

 private:
  struct Bundle {
    ResourceSet reserved, used;  // used: what tasks inside it hold now
    GpuGrant grant;
    GpuAllocator inner;  // over `grant`
    bool committed = false;
  };
  std::string describe_missing(const ResourceSet& need) const;

  int rank_;
  ResourceSet total_, avail_;
  GpuAllocator gpus_;
  std::map<std::pair<uint64_t, int>, Bundle> bundles_;
};

}  // namespace weft::sched
