// The bundle host's side of placement groups: this rank's PgLedger answers the head's two-phase
// reservation, and the executor gate draws tasks and actors of a group from their bundle's
// reservation (and its GPU devices) instead of the rank's free pool.
//
// Accounting: a prepared bundle adds its whole reservation to `used_`, so plain work cannot take
// it; work inside the bundle is counted by the ledger only. Plain work's GPUs come from the
// ledger too (device ids), so bundles and plain tasks never share a device by accident.
#include <cmath>

#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "weft/detail/registry.hpp"

namespace weft::core {
namespace {

sched::ResourceSet gpu_part(const sched::ResourceSet& need) {
  sched::ResourceSet g;
  if (int64_t u = need.units("GPU"); u > 0) g.set_units("GPU", u);
  return g;
}

}  // namespace

std::vector<int> rank_gpu_ids(const sched::RankInfo& info) {
  if (!info.gpu_ids.empty()) return info.gpu_ids;
  int64_t units = info.total.units("GPU");
  int n = static_cast<int>((units + sched::ResourceSet::kUnit - 1) / sched::ResourceSet::kUnit);
  std::vector<int> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = i;
  return ids;
}

PgRankState::PgRankState(const std::vector<sched::RankInfo>& ranks, int rank)
    : ledger(rank, ranks[rank].total, rank_gpu_ids(ranks[rank])) {
  if (rank == 0) head = std::make_unique<head::PgManager>(ranks);
}

PgRankState::~PgRankState() = default;

EventLoop::Admit EventLoop::gate_admit(ExecItem& item) {
  if (item.placement.pg == 0) {
    if (!item.need.fits_beside(used_, total_)) return Admit::kWait;
    sched::ResourceSet gpus = gpu_part(item.need);
    if (!gpus.empty()) {
      std::optional<sched::GpuGrant> g = pg_.ledger.acquire(gpus);
      if (!g) return Admit::kWait;
      item.grant = *g;
      item.placement.gpus = g->device_ids();
    }
    used_ += item.need;
    return Admit::kRun;
  }
  // Inside a group: the bundle asked for, or any of the group's bundles on this rank with room.
  const uint64_t pg = item.placement.pg;
  bool exists = false;
  auto lo = pg_.local.lower_bound({pg, item.placement.bundle < 0 ? INT32_MIN : item.placement.bundle});
  for (auto it = lo; it != pg_.local.end() && it->first.first == pg; ++it) {
    if (item.placement.bundle >= 0 && it->first.second != item.placement.bundle) break;
    exists = true;
    // Not yet committed: the head's commit is still on its way (the submitter heard CREATED
    // first, on another channel). Wait for it.
    if (!it->second.committed) continue;
    std::optional<sched::GpuGrant> g = pg_.ledger.acquire_in_bundle(pg, it->first.second, item.need);
    if (!g) continue;
    item.placement.bundle = it->first.second;
    item.grant = *g;
    item.placement.gpus = g->device_ids();
    return Admit::kRun;
  }
  return exists ? Admit::kWait : Admit::kReject;
}

void EventLoop::start_ready_pg() {
  // Every waiting item is tried, not only the first: items of different bundles (or groups)
  // do not wait for each other.
  for (auto it = pg_queue_.begin(); it != pg_queue_.end();) {
    Admit admit = gate_admit(*it);
    if (admit == Admit::kWait) {
      ++it;
      continue;
    }
    ExecItem item = std::move(*it);
    it = pg_queue_.erase(it);
    if (admit == Admit::kReject)
      reject_exec(std::move(item));
    else
      start_exec(std::move(item));
  }
}

void EventLoop::gate_release(const sched::ResourceSet& need, const PgContext& p,
                             const sched::GpuGrant& grant) {
  if (p.pg == 0) {
    used_ -= need;
    if (!grant.empty()) pg_.ledger.release(gpu_part(need), grant);
  } else {
    pg_.ledger.release_in_bundle(p.pg, p.bundle, need, grant);
  }
  if (pg_.tell_head_when_freed) {
    pg_.tell_head_when_freed = false;
    serde::Buffer b;
    WireWriter w(b);
    send(0, Msg::kPgFreed, b);
  }
}

void EventLoop::reject_exec(ExecItem item) {
  std::string why = "placement group " + std::to_string(item.placement.pg) +
                    " was removed before this work could start on rank " + std::to_string(rank_);
  if (item.kind == ExecItem::Kind::kActorCreate) {
    auto it = actors_.find(item.actor);
    if (it != actors_.end()) kill_local_actor(*it->second, why);
    return;
  }
  detail::ErrorInfo e;
  e.kind = detail::ErrorKind::kInfeasible;
  e.rank = rank_;
  const detail::FunctionEntry* fe = detail::find_function(item.fn_id);
  e.function = fe ? fe->name : "";
  e.message = "task " + e.function + ": " + why;
  send_result(item.owner, item.ret, false, {}, e);
}

void EventLoop::handle_pg_prepare(int src, const char* data, size_t len) {
  WireReader r(data, len);
  uint64_t pg = r.get<uint64_t>();
  int32_t bundle = r.get<int32_t>();
  sched::ResourceSet need = sched::ResourceSet::from_bytes(r.get_str());
  sched::PgLedger::Prepared p;
  auto key = std::make_pair(pg, static_cast<int>(bundle));
  if (pg_.local.count(key)) {
    p = pg_.ledger.prepare(pg, bundle, need);  // a retried message: the same answer
  } else if (!(used_ + need).fits_in(total_)) {
    // The ledger knows bundles and GPUs; plain tasks and actors running now are in used_.
    p.why = "rank " + std::to_string(rank_) + " is busy: " + need.str() + " needed, " +
            (total_ - used_).str() + " free now";
  } else {
    p = pg_.ledger.prepare(pg, bundle, need);
    if (p.ok) {
      used_ += need;
      pg_.local[key] = LocalBundle{need, false};
    }
  }
  if (!p.ok) pg_.tell_head_when_freed = true;
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(pg);
  w.put<int32_t>(bundle);
  w.put<uint8_t>(p.ok ? 1 : 0);
  w.put_str(p.why);
  w.put<uint32_t>(static_cast<uint32_t>(p.gpu_ids.size()));
  for (int id : p.gpu_ids) w.put<int32_t>(id);
  send(src, Msg::kPgPrepared, b);
}

void EventLoop::handle_pg_commit(const char* data, size_t len) {
  WireReader r(data, len);
  uint64_t pg = r.get<uint64_t>();
  pg_.ledger.commit(pg);
  for (auto it = pg_.local.lower_bound({pg, INT32_MIN});
       it != pg_.local.end() && it->first.first == pg; ++it)
    it->second.committed = true;
  start_ready_exec();  // work that arrived before the commit
}

void EventLoop::handle_pg_rollback(const char* data, size_t len) {
  WireReader r(data, len);
  uint64_t pg = r.get<uint64_t>();
  pg_.ledger.rollback(pg);
  for (auto it = pg_.local.lower_bound({pg, INT32_MIN});
       it != pg_.local.end() && it->first.first == pg;) {
    if (it->second.committed) {
      ++it;
      continue;
    }
    used_ -= it->second.need;
    it = pg_.local.erase(it);
  }
  start_ready_exec();
}

void EventLoop::handle_pg_release(const char* data, size_t len) {
  WireReader r(data, len);
  uint64_t pg = r.get<uint64_t>();
  // Work running in the group's bundles finishes; its releases find no bundle and are no-ops.
  pg_.ledger.remove(pg);
  for (auto it = pg_.local.lower_bound({pg, INT32_MIN});
       it != pg_.local.end() && it->first.first == pg;) {
    used_ -= it->second.need;
    it = pg_.local.erase(it);
  }
  start_ready_exec();  // queued work of the group is rejected there; plain work may fit now
}

}  // namespace weft::core
