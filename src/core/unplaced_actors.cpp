// Actors whose handle left its creator before they had a rank. weft::actor<T>().remote() returns
// at once, as in Ray: placement waits for the constructor's ref arguments, a placement group that
// may stay PENDING for minutes, and the head's answer for a name, none of which may block the
// caller. Calls made through such a handle queue here, in the caller's order, until the actor's
// rank is known, then go straight to it; when the actor will never exist (infeasible, its group
// INFEASIBLE or REMOVED, its name taken), they fail with ActorDiedError and the reason.
//
// The creator learns the rank when dispatch_actor_create sends the creation (actor_placed), or
// the failure when the creation fails (actor_unplaced). Another rank that got such a handle
// (inside a task argument) asks the creator once (kActorWhere) and keeps the answer
// (kActorPlaced), so only its first call pays a round trip.
#include <cstring>

#include "common/log.hpp"
#include "core/event_loop.hpp"

namespace weft::core {
namespace {

// A call to an actor that will never exist: ActorDiedError, with why (infeasible, its group
// INFEASIBLE or REMOVED, its name taken, its creator gone).
detail::ErrorInfo never_created(const ActorId& id, const detail::ErrorInfo& why) {
  detail::ErrorInfo e = why;
  e.kind = detail::ErrorKind::kActorDied;
  e.message = id.str() + " was never created: " + why.message;
  return e;
}

void put_placed(WireWriter& w, const ActorId& id, const UnplacedActor& u) {
  w.put<ActorId>(id);
  w.put<int32_t>(u.rank);
  w.put<uint8_t>(u.failed ? 1 : 0);
  if (u.failed) {
    w.put<uint8_t>(u.died ? 1 : 0);
    put_error(w, u.error);
  }
}

}  // namespace

void submit_actor_creation(EventLoop& l, std::unique_ptr<PendingCall> call) {
  ActorId id = call->actor.id;
  call->actor.rank = -1;
  l.post([call = std::move(call), id](EventLoop& loop) mutable {
    loop.submit_creation(id, std::move(call));
  });
}

void EventLoop::submit_creation(const ActorId& id, std::unique_ptr<PendingCall> call) {
  unplaced_[id];  // before any call through the handle can arrive
  submit(std::move(call));
}

int EventLoop::placed_rank(const ActorId& id) const {
  std::lock_guard<std::mutex> g(placed_mu_);
  auto it = placed_.find(id);
  return it == placed_.end() ? -1 : it->second;
}

void EventLoop::await_actor_rank(const detail::ActorRef& a, StatePtr reply) {
  auto [it, fresh] = unplaced_.try_emplace(a.id);
  UnplacedActor& u = it->second;
  if (fresh && a.id.creator == rank_) unknown_to_creator(u);
  if (a.id.creator != rank_) {
    if (fresh && a.rank >= 0) u.rank = a.rank;  // what the handle knew
    // A rank that failed: the actor lives elsewhere now, or never will; its creator knows.
    if (u.rank >= 0 && known_failed(u.rank)) {
      u.dead_rank = u.rank;
      u.rank = -1;
      u.asked = false;
    }
    if (u.rank < 0 && !u.failed && known_failed(a.id.creator)) {
      u.failed = u.died = true;
      u.error = detail::ErrorInfo{.kind = detail::ErrorKind::kActorDied,
                                  .rank = u.dead_rank,
                                  .message = "the actor " + a.id.str() + " lived on rank " +
                                             std::to_string(u.dead_rank) +
                                             ", which has failed, and its creator (rank " +
                                             std::to_string(a.id.creator) +
                                             "), which would restart it, has failed too"};
    }
  }
  u.rank_waiters.push_back(std::move(reply));
  settle_unplaced(a.id, u);
}

void EventLoop::unknown_to_creator(UnplacedActor& u) {
  u.failed = true;
  u.error.kind = detail::ErrorKind::kActorDied;
  u.error.rank = rank_;
  u.error.message = "its creator (rank " + std::to_string(rank_) + ") does not know it";
}

bool EventLoop::resolve_unplaced(std::unique_ptr<PendingCall>& call) {
  const ActorId id = call->actor.id;
  auto [it, fresh] = unplaced_.try_emplace(id);
  UnplacedActor& u = it->second;
  // Only handles made by submit_actor_creation have no rank, and it registers them first.
  if (fresh && id.creator == rank_) unknown_to_creator(u);
  if (u.rank >= 0) {
    call->actor.rank = u.rank;
    return true;
  }
  u.calls.push_back({std::move(call), false});
  settle_unplaced(id, u);  // fails it at once when the actor will never exist
  return false;
}

bool EventLoop::unplaced_skip(PendingCall& call) {
  auto [it, fresh] = unplaced_.try_emplace(call.actor.id);
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
  UnplacedActor& u = unplaced_[a.id];
  u.kill = true;
  settle_unplaced(a.id, u);
}

void EventLoop::actor_placed(const ActorId& id, int rank) {
  auto it = unplaced_.find(id);
  if (it == unplaced_.end() || it->second.rank >= 0) return;
  it->second.rank = rank;
  settle_unplaced(id, it->second);
}

void EventLoop::actor_unplaced(const ActorId& id, const detail::ErrorInfo& e) {
  auto it = unplaced_.find(id);
  if (it == unplaced_.end() || it->second.rank >= 0 || it->second.failed) return;
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
      w.put<int32_t>(u.dead_rank);  // -1, or the rank it lived on before (actor_restarts.cpp)
      send(id.creator, Msg::kActorWhere, b);
    }
    return;
  }
  if (!u.failed) {
    std::lock_guard<std::mutex> g(placed_mu_);
    placed_[id] = u.rank;  // a restart moves it
  }
  if (!u.waiters.empty()) {
    serde::Buffer b;
    WireWriter w(b);
    put_placed(w, id, u);
    // One that knows the current rank failed waits for the restart this rank has not made yet.
    std::erase_if(u.waiters, [&](const std::pair<int, int>& wt) {
      if (!u.failed && wt.second == u.rank) return false;
      send(wt.first, Msg::kActorPlaced, b);
      return true;
    });
  }
  const detail::ErrorInfo error = u.died ? u.error : never_created(id, u.error);
  for (StatePtr& reply : u.rank_waiters) {
    if (u.failed) {
      complete_error(*reply, error, completions_);
    } else {
      const int32_t rank = u.rank;
      std::vector<char> bytes(sizeof rank);
      std::memcpy(bytes.data(), &rank, sizeof rank);
      complete_ok(*reply, std::make_shared<detail::InlinePayload>(std::move(bytes)), completions_);
    }
  }
  u.rank_waiters.clear();
  std::vector<UnplacedActor::Parked> calls = std::move(u.calls);
  u.calls.clear();
  for (auto& p : calls) {
    if (u.failed) {
      if (p.skip) continue;  // failed already
      complete_error(*p.call->result, error, completions_);
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
  const int dead_rank = r.get<int32_t>();
  auto it = unplaced_.find(id);
  if (it == unplaced_.end()) {
    UnplacedActor unknown;
    unknown_to_creator(unknown);
    serde::Buffer b;
    WireWriter w(b);
    put_placed(w, id, unknown);
    send(src, Msg::kActorPlaced, b);
    return;
  }
  it->second.waiters.emplace_back(src, dead_rank);
  settle_unplaced(id, it->second);  // answers now when the fate is known
}

void EventLoop::handle_actor_placed(const char* data, size_t len) {
  WireReader r(data, len);
  ActorId id = r.get<ActorId>();
  UnplacedActor& u = unplaced_[id];
  int32_t rank = r.get<int32_t>();
  bool failed = r.get<uint8_t>() != 0;
  if (failed) {
    u.failed = true;
    u.died = r.get<uint8_t>() != 0;  // it lived: the creator's error is the death itself
    u.error = get_error(r);
  } else {
    u.rank = rank;
    u.dead_rank = -1;
  }
  settle_unplaced(id, u);
}

}  // namespace weft::core
