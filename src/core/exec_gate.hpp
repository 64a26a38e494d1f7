// ExecGate: the executor's resource gate on one rank. It owns the rank's resources — what plain
// tasks and actors hold, the placement-group bundles this rank hosts (the two-phase reservation's
// participant) and the GPU devices behind both — and the work waiting for them. It does no I/O:
// the event loop pushes work, takes what may start now, gives resources back, and sends what the
// gate's return values say (executor.cpp, pg_bundles.cpp, work_stealing.cpp).
//
// Order: work inside bundles first (any item that fits: bundles do not wait for each other), then
// plain work deepest nesting level first, arrival order within a level; a level whose first item
// does not fit does not block shallower levels. A task blocked in get() lends its CPU slot.
//
// Accounting: a prepared bundle adds its whole reservation to the plain `used` set, so plain work
// cannot take it; work inside the bundle is counted by the ledger only. Plain work's GPUs come
// from the ledger too (device ids), so bundles and plain tasks never share a device by accident.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/exec_item.hpp"
#include "sched/pg_ledger.hpp"
#include "sched/resource_set.hpp"

namespace weft::core {

class ExecGate {
 public:
  ExecGate(int rank, sched::ResourceSet total, std::vector<int> gpu_ids);

  // --- work ---
  void push(ExecItemPtr item);
  // The next item that may start now, in start order, into `out`: admitted (its resources are
  // taken), or with `*rejected` set when its group was removed from this rank. False when none
  // may start. One at a time (no list per turn), so the hot path allocates nothing here.
  bool take_next(ExecItemPtr* out, bool* rejected);
  // What `item` took comes back. True when the head waits to hear that room was freed here (a
  // bundle prepare was refused): the caller sends it kPgFreed.
  bool release(const ExecItem& item) {
    return release(item.need, item.rare->placement, item.rare->grant);
  }
  bool release(const sched::ResourceSet& need, const PgContext& p, const sched::GpuGrant& grant);
  // A task blocked in get() lends its CPU slot, and takes it back when it resumes.
  void lend_cpu(double cpus);
  void reclaim_cpu(double cpus);

  // --- work stealing ---
  // Plain tasks another rank may run (not actor creations, not work in bundles).
  static bool stealable(const ExecItem& item) {
    return item.kind == ExecItem::Kind::kTask && item.rare->placement.pg == 0;
  }
  uint32_t stealable_queued() const { return stealable_queued_; }
  int64_t free_cpu_units() const {
    return total_.units(sched::ResourceName::cpu()) - used_.units(sched::ResourceName::cpu());
  }
  // Nothing plain queued and a whole CPU free: this rank could take stolen work.
  bool idle() const { return plain_queued_ == 0 && free_cpu_units() >= sched::ResourceSet::kUnit; }
  // Up to `limit` queued stealable tasks that `may_take` accepts and whose CPUs add up to at
  // most `free_units`, taken out: the shallowest levels first (the biggest pieces of work) and
  // the youngest within a level, so what waited longest still runs here in arrival order.
  std::vector<ExecItemPtr> give_away(int64_t free_units, uint32_t limit,
                                     const std::function<bool(const ExecItem&)>& may_take);

  // --- placement-group bundles hosted here (the head's two-phase reservation) ---
  sched::PgLedger::Prepared prepare(uint64_t pg, int bundle, const sched::ResourceSet& need);
  void commit(uint64_t pg);
  void rollback(uint64_t pg);
  void remove(uint64_t pg);  // running work finishes; queued work of it is rejected

  const sched::ResourceSet& total() const { return total_; }
  const sched::ResourceSet& used() const { return used_; }
  size_t queued() const;
  // Each queued item, bundle work first, in start order (job_state_snapshot.cpp).
  template <class F>
  void for_each_queued(F&& f) const {
    for (const ExecItemPtr& i : bundle_queue_) f(static_cast<const ExecItem&>(*i));
    for (const auto& [depth, level] : queue_)
      for (const ExecItemPtr& i : level) f(static_cast<const ExecItem&>(*i));
  }

 private:
  enum class Admit { kRun, kWait, kReject };
  Admit admit(ExecItem& item);  // takes what it admits
  ExecItemPtr take(std::deque<ExecItemPtr>& level, size_t i);

  struct LocalBundle {
    sched::ResourceSet need;
    bool committed = false;
  };
  const int rank_;
  sched::ResourceSet total_, used_;
  sched::PgLedger ledger_;
  std::map<std::pair<uint64_t, int>, LocalBundle> bundles_;
  bool tell_head_when_freed_ = false;  // a prepare was refused here: the head waits for room
  std::map<uint32_t, std::deque<ExecItemPtr>, std::greater<>> queue_;  // plain work, by depth
  std::deque<ExecItemPtr> bundle_queue_;  // work inside bundles: never queued behind plain work
  uint32_t stealable_queued_ = 0;
  size_t plain_queued_ = 0;  // items in queue_ (its emptied levels stay)
};

}  // namespace weft::core
