#include "core/exec_gate.hpp"

#include <climits>
#include <iterator>

namespace weft::core {
namespace {

sched::ResourceSet gpu_part(const sched::ResourceSet& need) {
  sched::ResourceSet g;
  if (int64_t u = need.units(sched::ResourceName::gpu()); u > 0)
    g.set_units(sched::ResourceName::gpu(), u);
  return g;
}

}  // namespace

ExecGate::ExecGate(int rank, sched::ResourceSet total, std::vector<int> gpu_ids)
    : rank_(rank), total_(total), ledger_(rank, std::move(total), std::move(gpu_ids)) {}

void ExecGate::push(ExecItemPtr item) {
  if (item->rare->placement.pg != 0) {  // bundles have their own reservations: their own queue
    bundle_queue_.push_back(std::move(item));
    return;
  }
  if (stealable(*item)) ++stealable_queued_;
  const uint32_t depth = item->depth;
  queue_[depth].push_back(std::move(item));
  ++plain_queued_;
}

ExecItemPtr ExecGate::take(std::deque<ExecItemPtr>& level, size_t i) {
  ExecItemPtr item;
  if (i == 0) {  // the usual case: deque::erase's general shift costs ~100 instructions more
    item = std::move(level.front());
    level.pop_front();
  } else {
    auto at = level.begin() + static_cast<std::ptrdiff_t>(i);
    item = std::move(*at);
    level.erase(at);
  }
  --plain_queued_;
  if (stealable(*item)) --stealable_queued_;
  return item;
}

size_t ExecGate::queued() const { return bundle_queue_.size() + plain_queued_; }

ExecGate::Admit ExecGate::admit(ExecItem& item) {
  if (item.rare->placement.pg == 0) {
    if (!item.need.fits_beside(used_, total_)) return Admit::kWait;
    if (item.need.units(sched::ResourceName::gpu()) > 0) {
      std::optional<sched::GpuGrant> g = ledger_.acquire(gpu_part(item.need));
      if (!g) return Admit::kWait;
      ExecRare& r = item.rare.mut();
      r.grant = *g;
      r.placement.gpus = g->device_ids();
    }
    used_ += item.need;
    return Admit::kRun;
  }
  // Inside a group: the bundle asked for, or any of the group's bundles here with room.
  ExecRare& r = item.rare.mut();  // made: it names the group
  const uint64_t pg = r.placement.pg;
  const int wanted = r.placement.bundle;
  bool exists = false;
  for (auto it = bundles_.lower_bound({pg, wanted < 0 ? INT_MIN : wanted});
       it != bundles_.end() && it->first.first == pg; ++it) {
    if (wanted >= 0 && it->first.second != wanted) break;
    exists = true;
    // Not yet committed: the head's commit is still on its way (the submitter heard CREATED
    // first, on another channel). Wait for it.
    if (!it->second.committed) continue;
    std::optional<sched::GpuGrant> g = ledger_.acquire_in_bundle(pg, it->first.second, item.need);
    if (!g) continue;
    r.placement.bundle = it->first.second;
    r.grant = *g;
    r.placement.gpus = g->device_ids();
    return Admit::kRun;
  }
  return exists ? Admit::kWait : Admit::kReject;
}

bool ExecGate::take_next(ExecItemPtr* out, bool* rejected) {
  // Every waiting bundle item is tried, not only the first: items of different bundles (or
  // groups) do not wait for each other.
  for (auto it = bundle_queue_.begin(); it != bundle_queue_.end(); ++it) {
    const Admit a = admit(**it);
    if (a == Admit::kWait) continue;
    *out = std::move(*it);
    *rejected = a == Admit::kReject;
    bundle_queue_.erase(it);
    return true;
  }
  // Deepest level first on every call: what the caller started may have been all a deeper
  // level waited for.
  // An emptied level stays (a few depths in all): erasing it cost a map node and the deque's
  // two blocks, allocated again by the next task of that depth.
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->second.empty() || admit(*it->second.front()) == Admit::kWait)
      continue;  // plain work is never rejected
    *out = take(it->second, 0);
    *rejected = false;
    return true;
  }
  return false;
}

bool ExecGate::release(const sched::ResourceSet& need, const PgContext& p,
                       const sched::GpuGrant& grant) {
  if (p.pg == 0) {
    used_ -= need;
    if (!grant.empty()) ledger_.release(gpu_part(need), grant);
  } else {
    ledger_.release_in_bundle(p.pg, p.bundle, need, grant);
  }
  const bool tell = tell_head_when_freed_;
  tell_head_when_freed_ = false;
  return tell;
}

void ExecGate::lend_cpu(double cpus) { used_ -= sched::ResourceSet{{"CPU", cpus}}; }
void ExecGate::reclaim_cpu(double cpus) { used_ += sched::ResourceSet{{"CPU", cpus}}; }

std::vector<ExecItemPtr> ExecGate::give_away(int64_t free_units, uint32_t limit,
                                             const std::function<bool(const ExecItem&)>& may_take) {
  std::vector<ExecItemPtr> given;
  for (auto level = queue_.rbegin(); level != queue_.rend() && given.size() < limit; ++level) {
    auto& q = level->second;
    for (size_t i = q.size(); i-- > 0 && given.size() < limit;) {
      const ExecItem& item = *q[i];
      const int64_t cpu = item.need.units(sched::ResourceName::cpu());
      if (cpu > free_units || !stealable(item) || !may_take(item)) continue;
      free_units -= cpu;
      given.push_back(take(q, i));
    }
  }
  return given;
}

sched::PgLedger::Prepared ExecGate::prepare(uint64_t pg, int bundle,
                                            const sched::ResourceSet& need) {
  sched::PgLedger::Prepared p;
  const auto key = std::make_pair(pg, bundle);
  if (bundles_.count(key)) {
    p = ledger_.prepare(pg, bundle, need);  // a retried message: the same answer
  } else if (!(used_ + need).fits_in(total_)) {
    // The ledger knows bundles and GPUs; plain tasks and actors running now are in used_.
    p.why = "rank " + std::to_string(rank_) + " is busy: " + need.str() + " needed, " +
            (total_ - used_).str() + " free now";
  } else {
    p = ledger_.prepare(pg, bundle, need);
    if (p.ok) {
      used_ += need;
      bundles_[key] = LocalBundle{need, false};
    }
  }
  if (!p.ok) tell_head_when_freed_ = true;
  return p;
}

void ExecGate::commit(uint64_t pg) {
  ledger_.commit(pg);
  for (auto it = bundles_.lower_bound({pg, INT_MIN}); it != bundles_.end() && it->first.first == pg;
       ++it)
    it->second.committed = true;
}

void ExecGate::rollback(uint64_t pg) {
  ledger_.rollback(pg);
  for (auto it = bundles_.lower_bound({pg, INT_MIN});
       it != bundles_.end() && it->first.first == pg;) {
    if (it->second.committed) {
      ++it;
      continue;
    }
    used_ -= it->second.need;
    it = bundles_.erase(it);
  }
}

void ExecGate::remove(uint64_t pg) {
  // Work running in the group's bundles finishes; its releases find no bundle and are no-ops.
  ledger_.remove(pg);
  for (auto it = bundles_.lower_bound({pg, INT_MIN});
       it != bundles_.end() && it->first.first == pg;) {
    used_ -= it->second.need;
    it = bundles_.erase(it);
  }
}

}  // namespace weft::core
