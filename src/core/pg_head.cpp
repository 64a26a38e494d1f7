// Rank 0's side of placement groups: messages in, head::PgManager decides, actions out. Every
// state change is pushed to the group's subscribers (its creator and every rank that submitted
// work to it), so submitters never poll.
#include "common/log.hpp"
#include "core/event_loop.hpp"

namespace weft::core {
namespace {

void put_update(WireWriter& w, uint64_t id, const sched::PlacementGroup* g) {
  w.put<uint64_t>(id);
  if (!g) {  // subscribed before the group's creation reached the head
    w.put<uint8_t>(0);
    return;
  }
  w.put<uint8_t>(1);
  w.put<uint8_t>(static_cast<uint8_t>(g->state()));
  w.put_str(g->reason());
  const auto& bundles = g->spec().bundles;
  w.put<uint32_t>(static_cast<uint32_t>(bundles.size()));
  for (const auto& b : bundles) w.put_str(b.to_bytes());
  const auto& locs = g->locations();
  w.put<uint32_t>(static_cast<uint32_t>(locs.size()));
  for (const auto& l : locs) {
    w.put<int32_t>(l.bundle);
    w.put<int32_t>(l.rank);
    w.put<int32_t>(l.node);
    w.put<int32_t>(l.nvlink_domain);
    w.put<uint32_t>(static_cast<uint32_t>(l.gpu_ids.size()));
    for (int id : l.gpu_ids) w.put<int32_t>(id);
  }
}

}  // namespace

void EventLoop::pg_flush(head::PgOutbox& out) {
  for (const head::PgAction& a : out.actions) {
    serde::Buffer b;
    WireWriter w(b);
    w.put<uint64_t>(a.pg);
    Msg type = Msg::kPgPrepare;
    switch (a.kind) {
      case head::PgAction::Kind::kPrepare:
        w.put<int32_t>(a.bundle);
        w.put_str(a.need.to_bytes());
        break;
      case head::PgAction::Kind::kCommit: type = Msg::kPgCommit; break;
      case head::PgAction::Kind::kRollback: type = Msg::kPgRollback; break;
      case head::PgAction::Kind::kRelease: type = Msg::kPgRelease; break;
    }
    send(a.rank, type, b);
  }
  // Reservations (a group becoming CREATED, or REMOVED) reach every rank, not only the
  // group's subscribers: any rank's submitter must keep plain tasks off the CPUs a group holds.
  // One message per rank per flush carries all of them.
  std::vector<uint64_t> reserving;
  for (uint64_t id : out.changed) {
    const sched::PlacementGroup* g = pg_.head->find(id);
    if (g) WEFT_LOG(Debug) << g->describe();
    serde::Buffer b;
    WireWriter w(b);
    put_update(w, id, g);
    for (int r : pg_.head->subscribers(id)) send(r, Msg::kPgUpdate, b);
    if (g && (g->state() == sched::PgState::kCreated || g->state() == sched::PgState::kRemoved))
      reserving.push_back(id);
  }
  for (int r = 0; r < size_ && !reserving.empty(); ++r) {
    serde::Buffer b;
    WireWriter w(b);
    uint32_t n = 0;
    for (uint64_t id : reserving) n += pg_.head->subscribers(id).count(r) ? 0 : 1;
    if (n == 0) continue;  // a subscriber heard it in its own update
    w.put<uint32_t>(n);
    for (uint64_t id : reserving)
      if (!pg_.head->subscribers(id).count(r)) put_update(w, id, pg_.head->find(id));
    send(r, Msg::kPgReservations, b);
  }
  out = {};
}

void EventLoop::handle_pg_create(int src, const char* data, size_t len) {
  if (!pg_.head) return;  // head messages only make sense on rank 0
  WireReader r(data, len);
  sched::PgSpec spec;
  spec.id = r.get<uint64_t>();
  spec.strategy = static_cast<sched::Strategy>(r.get<uint8_t>());
  spec.name = r.get_str();
  uint32_t n = r.get<uint32_t>();
  for (uint32_t i = 0; i < n; ++i) spec.bundles.push_back(sched::ResourceSet::from_bytes(r.get_str()));
  head::PgOutbox out;
  pg_.head->create(std::move(spec), src, out);
  pg_flush(out);
}

void EventLoop::handle_pg_remove(const char* data, size_t len) {
  if (!pg_.head) return;  // head messages only make sense on rank 0
  WireReader r(data, len);
  head::PgOutbox out;
  pg_.head->remove(r.get<uint64_t>(), out);
  pg_flush(out);
}

void EventLoop::handle_pg_subscribe(int src, const char* data, size_t len) {
  if (!pg_.head) return;  // head messages only make sense on rank 0
  WireReader r(data, len);
  uint64_t id = r.get<uint64_t>();
  pg_.head->subscribe(id, src);
  const sched::PlacementGroup* g = pg_.head->find(id);
  if (!g) return;  // the creation's update will reach this subscriber too
  serde::Buffer b;
  WireWriter w(b);
  put_update(w, id, g);
  send(src, Msg::kPgUpdate, b);
}

void EventLoop::handle_pg_prepared(int src, const char* data, size_t len) {
  if (!pg_.head) return;  // head messages only make sense on rank 0
  WireReader r(data, len);
  uint64_t pg = r.get<uint64_t>();
  int32_t bundle = r.get<int32_t>();
  bool ok = r.get<uint8_t>() != 0;
  std::string why = r.get_str();
  uint32_t n = r.get<uint32_t>();
  std::vector<int> gpus(n);
  for (auto& g : gpus) g = r.get<int32_t>();
  head::PgOutbox out;
  pg_.head->on_prepared(pg, bundle, src, ok, why, std::move(gpus), out);
  pg_flush(out);
}

void EventLoop::handle_pg_freed() {
  if (!pg_.head) return;  // head messages only make sense on rank 0
  head::PgOutbox out;
  pg_.head->retry_pending(out);
  pg_flush(out);
}

}  // namespace weft::core
