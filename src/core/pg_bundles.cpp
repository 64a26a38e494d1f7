// The bundle host's side of placement groups: the head's two-phase reservation (prepare, commit,
// rollback, release) answered by this rank's gate (exec_gate.hpp: its ledger of bundles and
// devices), which draws tasks and actors of a group from their bundle's reservation instead of
// the rank's free pool.
#include <cmath>

#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "weft/detail/registry.hpp"

namespace weft::core {
std::vector<int> rank_gpu_ids(const sched::RankInfo& info) {
  if (!info.gpu_ids.empty()) return info.gpu_ids;
  int64_t units = info.total.units("GPU");
  int n = static_cast<int>((units + sched::ResourceSet::kUnit - 1) / sched::ResourceSet::kUnit);
  std::vector<int> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = i;
  return ids;
}

PgRankState::PgRankState(const std::vector<sched::RankInfo>& ranks, int rank) {
  if (rank == 0) head = std::make_unique<head::PgManager>(ranks);
}

PgRankState::~PgRankState() = default;

void EventLoop::gate_release(const sched::ResourceSet& need, const PgContext& p,
                             const sched::GpuGrant& grant) {
  if (gate_.release(need, p, grant)) {  // a prepare was refused here: the head waits for room
    serde::Buffer b;
    WireWriter w(b);
    send(0, Msg::kPgFreed, b);
  }
}

void EventLoop::reject_exec(ExecItemPtr item_ptr) {
  const ExecItem& item = *item_ptr;
  std::string why = "placement group " + std::to_string(item.rare->placement.pg) +
                    " was removed before this work could start on rank " + std::to_string(rank_);
  if (item.kind == ExecItem::Kind::kActorCreate) {
    auto it = actors_.find(item.rare->actor);
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
  sched::PgLedger::Prepared p = gate_.prepare(pg, bundle, need);
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
  gate_.commit(r.get<uint64_t>());
  start_ready_exec();  // work that arrived before the commit
}

void EventLoop::handle_pg_rollback(const char* data, size_t len) {
  WireReader r(data, len);
  gate_.rollback(r.get<uint64_t>());
  start_ready_exec();
}

void EventLoop::handle_pg_release(const char* data, size_t len) {
  WireReader r(data, len);
  gate_.remove(r.get<uint64_t>());  // running work finishes; its releases are no-ops
  start_ready_exec();  // queued work of the group is rejected there; plain work may fit now
}

}  // namespace weft::core
