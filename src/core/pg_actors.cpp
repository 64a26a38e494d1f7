// Actors created in a placement group that is not CREATED yet. Creating one must not block the
// caller until the group is placed (a PENDING group may wait minutes for room), so its handle
// leaves without a rank (-1). Calls made through such a handle queue here, in the caller's
// order, until the actor's rank is known, then go straight to it; when the group turns out
// INFEASIBLE or is REMOVED first, they fail with the creation's typed error.
//
// The creator learns the rank when dispatch_actor_create sends the creation (actor_placed), or
// the failure when the creation fails (actor_unplaced). Another rank that got such a handle
// (inside a task argument) asks the creator once (kActorWhere) and keeps the answer
// (kActorPlaced), so only its first call pays a round trip.
#include "common/log.hpp"
#include "core/event_loop.hpp"

namespace weft::core {
namespace {

void put_placed(WireWriter& w, const ActorId& id, const UnplacedActor& u) {
  w.put<ActorId>(id);
  w.put<int32_t>(u.rank);
  w.put<uint8_t>(u.failed ? 1 : 0);
  if (u.failed) put_error(w, u.error);
}

}  // namespace

bool submit_unplaced_actor(EventLoop& l, PendingCall* call) {
  if (call->placement.pg == 0) return false;
  {
    // A group known here to be decided (CREATED, INFEASIBLE, REMOVED) takes the usual path: the
    // creation is routed or fails at once, and the handle carries its rank.
    std::lock_guard<std::mutex> g(l.pg_state().mu);
    auto it = l.pg_state().snapshots.find(call->placement.pg);
    if (it != l.pg_state().snapshots.end() && it->second.state != sched::PgState::kPending)
      return false;
  }
  ActorId id = call->actor.id;
  call->actor.rank = -1;
  l.post([call, id](EventLoop& loop) {
    loop.pg_state().unplaced[id];  // before any call through the handle can arrive
    loop.submit(std::unique_ptr<PendingCall>(call));
  });
  return true;
}

bool EventLoop::resolve_unplaced(std::unique_ptr<PendingCall>& call) {
  const ActorId id = call->actor.id;
  auto [it, fresh] = pg_.unplaced.try_emplace(id);
  UnplacedActor& u = it->second;
  if (fresh && id.creator == rank_) {
    // Only handles made by submit_unplaced_actor have no rank, and it registers them first.
    u.failed = true;
    u.error.kind = detail::ErrorKind::kActorDied;
    u.error.rank = rank_;
    u.error.message = "its creator (rank " + std::to_string(rank_) + ") does not know it";
  }
  if (u.rank >= 0) {
    call->actor.rank = u.rank;
    return true;
  }
  u.calls.push_back({std::move(call), false});
  settle_unplaced(id, u);  // fails it at once when the actor will never exist
  return false;
}

bool EventLoop::unplaced_skip(PendingCall& call) {
  auto [it, fresh] = pg_.unplaced.try_emplace(call.actor.id);
  UnplacedActor& u = it->second;
  if (u.rank >= 0) {
    call.actor.rank = u.rank;
    return true;
  }
  if (u.failed || (fresh && call.actor.id.creator == rank_)) return false;  // no actor: no order
  auto c = std::make_unique<PendingCall>();
  c->kind = PendingCall::Kind::kActorCall;
  c->actor = call.actor;
  c->seq = call.seq;
  c->fn_id = call.fn_id;
  c->result = call.result;
  u.calls.push_back({std::move(c), true});
  settle_unplaced(call.actor.id, u);
  return false;
}

void EventLoop::kill_unplaced(const detail::ActorRef& a) {
  UnplacedActor& u = pg_.unplaced[a.id];
  u.kill = true;
  settle_unplaced(a.id, u);
}

void EventLoop::actor_placed(const ActorId& id, int rank) {
  auto it = pg_.unplaced.find(id);
  if (it == pg_.unplaced.end() || it->second.rank >= 0) return;
  it->second.rank = rank;
  settle_unplaced(id, it->second);
}

void EventLoop::actor_unplaced(const ActorId& id, const detail::ErrorInfo& e) {
  auto it = pg_.unplaced.find(id);
  if (it == pg_.unplaced.end() || it->second.rank >= 0 || it->second.failed) return;
  it->second.failed = true;
  it->second.error = e;
  settle_unplaced(id, it->second);
}

// Moves everything waiting on `u` forward once its fate is known; asks the creator otherwise.
void EventLoop::settle_unplaced(const ActorId& id, UnplacedActor& u) {
  if (u.rank < 0 && !u.failed) {
    if (id.creator != rank_ && !u.asked) {
      u.asked = true;
      serde::Buffer b;
      WireWriter w(b);
      w.put<ActorId>(id);
      send(id.creator, Msg::kActorWhere, b);
    }
    return;
  }
  if (!u.waiters.empty()) {
    serde::Buffer b;
    WireWriter w(b);
    put_placed(w, id, u);
    for (int r : u.waiters) send(r, Msg::kActorPlaced, b);
    u.waiters.clear();
  }
  std::vector<UnplacedActor::Parked> calls = std::move(u.calls);
  u.calls.clear();
  for (auto& p : calls) {
    if (u.failed) {
      if (p.skip) continue;  // failed already
      detail::ErrorInfo e = u.error;
      e.message = id.str() + " was never created: " + u.error.message;
      complete_error(*p.call->result, e, completions_);
      on_object_done(p.call->result);
      continue;
    }
    p.call->actor.rank = u.rank;
    if (!p.skip) {
      dispatch_actor_call(std::move(p.call));
      continue;
    }
    send_skip(u.rank, id, *p.call);  // the actor must see this position of the caller's order
  }
  if (u.kill && u.rank >= 0) {
    u.kill = false;
    kill_actor(detail::ActorRef{id, u.rank, 0});
  }
}

void EventLoop::handle_actor_where(int src, const char* data, size_t len) {
  WireReader r(data, len);
  ActorId id = r.get<ActorId>();
  auto it = pg_.unplaced.find(id);
  if (it == pg_.unplaced.end()) {
    UnplacedActor unknown;
    unknown.failed = true;
    unknown.error.kind = detail::ErrorKind::kActorDied;
    unknown.error.rank = rank_;
    unknown.error.message = "its creator (rank " + std::to_string(rank_) + ") does not know it";
    serde::Buffer b;
    WireWriter w(b);
    put_placed(w, id, unknown);
    send(src, Msg::kActorPlaced, b);
    return;
  }
  it->second.waiters.push_back(src);
  settle_unplaced(id, it->second);  // answers now when the fate is known
}

void EventLoop::handle_actor_placed(const char* data, size_t len) {
  WireReader r(data, len);
  ActorId id = r.get<ActorId>();
  UnplacedActor& u = pg_.unplaced[id];
  int32_t rank = r.get<int32_t>();
  bool failed = r.get<uint8_t>() != 0;
  if (failed) {
    u.failed = true;
    u.error = get_error(r);
  } else {
    u.rank = rank;
  }
  settle_unplaced(id, u);
}

}  // namespace weft::core
