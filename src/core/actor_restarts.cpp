// Actor restarts (ActorOptions::max_restarts, max_task_retries; issue #10, DESIGN §6).
//
// The creator owns an actor's lives: it keeps the creation as placed (ActorLife: resolved
// constructor arguments and the refs they hold) for actors created with max_restarts != 0. When
// the actor's rank fails, the creator places it again (ActorPlacer, failed ranks excluded) and
// sends the creation once more as incarnation k+1; the new host rebuilds it from its latest
// checkpoint when it has one (actor_checkpoints.cpp), else from the constructor. Once
// max_restarts is used up (-1: never) the actor is dead and every call fails with
// ActorDiedError saying how many restarts ran and where.
//
// A named actor's entry in the head's directory follows it: the creator sends kNameUpdate with
// each new incarnation's rank, and kNameRelease when it gives up (the head itself frees the
// names of actors without restarts when their rank fails: ActorDirectory::drop_host).
//
// Handles stay valid. A caller with a stale rank (it failed) relocates the call: the creator
// knows the current incarnation at once; another rank parks it in its UnplacedActor entry and
// asks the creator (kActorWhere naming the rank it knows failed; the creator answers only once
// the actor lives elsewhere, or never will), then goes straight there.
//
// Order per caller. A caller numbers its calls to an actor once, across incarnations
// (CallerSeq), and sends them in that order (a call ready early waits behind an earlier one that
// waits for its arguments: on_ready_call). The first time it reaches a new incarnation it sends
// a resume (the `base`: one past the highest position it ever sent): positions below it — calls
// re-sent because they were in flight at the death (max_task_retries) — go unordered, in the
// order the caller sends them (increasing), and every position from `base` on (calls made
// during the restart, calls held for their arguments across it) through the host's
// CallOrderer. A restored actor answers a re-sent call that its checkpoint already contains
// with an error instead of running it twice.
//
// A stored result of a call whose actor dies while the caller copies it (the only copy) is lost
// with it; the copy's failure can come before the death is declared, and the actor may even
// live (a network fault). So that failure is held (hold_lost_call_result): the declaration
// re-sends the call as any call in flight there, and with none in twice the failure timeout the
// failure is the call's result. An answer from an incarnation given up on is dropped (on_result).
#include <algorithm>
#include <tuple>

#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/pg_wire.hpp"
#include "weft/detail/registry.hpp"

namespace weft::core {

std::string ActorLife::history() const {
  std::string where;
  for (size_t i = 0; i < ranks.size(); ++i) where += (i ? ", " : "") + std::to_string(ranks[i]);
  return std::to_string(restarts) + (restarts == 1 ? " restart" : " restarts") +
         ", lives on ranks " + where;
}

void EventLoop::send_creation(const PendingCall& call, uint32_t incarnation,
                              std::vector<StatePtr> refs, bool expect_checkpoint) {
  serde::Buffer b;
  WireWriter w(b);
  w.put<ActorId>(call.actor.id);
  w.put<uint64_t>(call.fn_id);
  w.put<int32_t>(call.create_opts->max_concurrency);
  w.put_str(call.need.to_bytes());
  put_placement(w, call.placement);
  w.put_str(call.create_opts->name);
  w.put<uint32_t>(incarnation);
  w.put<int32_t>(call.create_opts->max_restarts);
  w.put<int32_t>(call.create_opts->checkpoint_every);
  w.put<int64_t>(call.create_opts->checkpoint_interval_ms);
  w.put<uint8_t>(expect_checkpoint ? 1 : 0);
  detail::dedupe_refs(refs);
  put_ref_ids(w, refs);
  w.put_bytes(call.args.data(), call.args.size());
  send_with_refs(call.actor.rank, Msg::kCreateActor, b, std::move(refs));
}

void EventLoop::keep_life(const PendingCall& call) {
  if (call.create_opts->max_restarts == 0) return;
  ActorLife& l = lives_[call.actor.id];
  l.spec = std::make_unique<PendingCall>(call);
  l.spec->result.reset();
  l.rank = call.actor.rank;
  l.ranks = {l.rank};
}

void EventLoop::restart_actors_on(int rank, const std::string& reason) {
  for (auto& entry : lives_) {
    // Named, not a structured binding: the lambda below captures them (clang 14 cannot).
    const auto& id = entry.first;
    auto& life = entry.second;
    if (life.dead || life.rank != rank) continue;
    const PendingCall& spec = *life.spec;
    const std::string cls = detail::class_name(spec.fn_id);
    UnplacedActor& u = unplaced_[id];
    const std::string died = "actor " + cls + " " + id.str() + " died with rank " +
                             std::to_string(rank) + " (" + reason + ")";
    auto give_up = [&](const std::string& why) {
      life.dead = true;
      if (!spec.create_opts->name.empty())
        send_name_release(spec.create_opts->name, id);  // the name is free
      u.rank = -1;
      u.failed = u.died = true;
      u.error = detail::ErrorInfo{
          .kind = detail::ErrorKind::kActorDied, .rank = rank, .message = died + "; " + why};
      WEFT_LOG(Warn) << u.error.message;
      settle_unplaced(id, u);
    };
    if (spec.placement.pg != 0) {
      give_up("it lived in a placement group bundle, and such actors are not restarted (" +
              life.history() + ")");
      continue;
    }
    const int max = spec.create_opts->max_restarts;
    if (max >= 0 && life.restarts >= max) {
      give_up("not restarted: max_restarts = " + std::to_string(max) + " used up (" +
              life.history() + ")");
      continue;
    }
    ActorPlacer::Placed p = actor_placer_.place(spec.need, spec.strategy, failed_);
    if (p.rank < 0) {
      give_up("not restarted: " + p.why + " (" + life.history() + ")");
      continue;
    }
    if (!p.fallback.empty())
      WEFT_LOG(Info) << "soft node affinity: the restart of actor " << cls << " " << id.str()
                     << " asked for " << p.fallback;
    const int target = p.rank;
    ++life.restarts;
    ++life.incarnation;
    life.rank = target;
    life.ranks.push_back(target);
    life.spec->actor.rank = target;
    WEFT_LOG(Warn) << "restarting " << died << " on rank " << target << " (restart "
                   << life.restarts << " of "
                   << (max < 0 ? std::string("no limit") : std::to_string(max)) << ")";
    send_creation(*life.spec, life.incarnation, life.spec->contained, life.checkpointed);
    // get_actor(name) finds the new incarnation, not the rank that failed.
    if (!spec.create_opts->name.empty()) send_name_update(spec.create_opts->name, life.spec->actor);
    u.rank = target;
    u.failed = u.died = false;
    {
      std::lock_guard<std::mutex> g(placed_mu_);
      placed_[id] = target;
    }
    settle_unplaced(id, u);
  }
}

void EventLoop::actor_checkpointed(const ActorId& id) {
  if (id.creator == rank_) {
    if (auto it = lives_.find(id); it != lives_.end()) it->second.checkpointed = true;
    return;
  }
  if (known_failed(id.creator)) return;
  serde::Buffer b;
  WireWriter w(b);
  w.put<ActorId>(id);
  send(id.creator, Msg::kActorCheckpointed, b);
}

void EventLoop::handle_actor_checkpointed(const char* data, size_t len) {
  WireReader r(data, len);
  actor_checkpointed(r.get<ActorId>());
}

bool EventLoop::route_skip(PendingCall& call) {
  if (call.actor.rank < 0) return unplaced_skip(call);  // unplaced_actors.cpp
  if (!known_failed(call.actor.rank) || call.actor.max_restarts == 0) return true;
  // Its handle's rank failed: the position belongs to the restart's order now (it was never
  // sent, or it would be below the restart's base), so the skip is relocated as a call is.
  const ActorId id = call.actor.id;
  if (id.creator != rank_ && known_failed(id.creator)) return false;  // no restart: no order
  UnplacedActor& u = unplaced_[id];
  if (id.creator != rank_) {
    if (u.rank >= 0 && (u.rank == call.actor.rank || known_failed(u.rank))) {
      u.rank = -1;  // ask the creator where it lives now
      u.asked = false;
    }
    if (u.rank < 0 && !u.asked) u.dead_rank = call.actor.rank;
  }
  call.actor.rank = -1;
  return unplaced_skip(call) && !known_failed(call.actor.rank);
}

bool EventLoop::relocate_call(std::unique_ptr<PendingCall>& call) {
  const ActorId id = call->actor.id;
  const int dead = call->actor.rank;
  if (id.creator != rank_ && known_failed(id.creator)) {
    complete_error(
        *call->result,
        detail::ErrorInfo{
            .kind = detail::ErrorKind::kActorDied,
            .rank = dead,
            .message = "the actor " + id.str() + " lived on rank " + std::to_string(dead) +
                       ", which has failed, and its creator (rank " + std::to_string(id.creator) +
                       "), which would restart it, has failed too"},
        completions_);
    on_object_done(call->result);
    return false;
  }
  UnplacedActor& u = unplaced_[id];
  if (id.creator != rank_) {
    if (u.rank >= 0 && (u.rank == dead || known_failed(u.rank))) {
      u.rank = -1;  // ask the creator where it lives now
      u.asked = false;
    }
    if (u.rank < 0 && !u.asked) u.dead_rank = dead;  // answered once it lives elsewhere
  }
  call->actor.rank = -1;
  if (!resolve_unplaced(call)) return false;  // parked until the creator answers, or failed
  if (known_failed(call->actor.rank)) {         // it was not restarted (killed before its rank died)
    fail_dead_actor_call(*call);
    return false;
  }
  return true;
}

void EventLoop::keep_call(const PendingCall& call) {
  auto c = std::make_unique<PendingCall>(call);
  if (c->call_retries == -2) c->call_retries = call.actor.max_task_retries;
  kept_calls_[call.result->id] = std::move(c);
}

bool EventLoop::hold_lost_call_result(int holder, const ObjectId& id,
                                      const detail::ErrorInfo& e) {
  if (e.kind != detail::ErrorKind::kObjectLost || known_failed(holder)) return false;
  auto c = calls_inflight_.find(id);
  if (c == calls_inflight_.end() || c->second != holder || !kept_calls_.contains(id)) return false;
  // The holder's death is reported soon (its endpoint failed; heartbeats, the process check);
  // a holder that is not declared failed in twice the failure timeout lives, and the copy's
  // failure is the call's result.
  const auto wait = std::max<std::chrono::milliseconds>(2 * failure_timeout_,
                                                        std::chrono::milliseconds(1000));
  lost_call_results_[id] = LostCallResult{holder, e, std::chrono::steady_clock::now() + wait};
  WEFT_LOG(Info) << "the result of call " << id.str() << " was lost with its holder, rank "
                 << holder << ", before this rank had a copy; the call is re-sent if that rank "
                 << "is declared failed: " << e.message;
  return true;
}

void EventLoop::expire_lost_call_results(std::chrono::steady_clock::time_point now) {
  std::vector<ObjectId> due;
  for (const auto& [id, l] : lost_call_results_)
    if (now >= l.until) due.push_back(id);
  for (const ObjectId& id : due) {
    LostCallResult l = std::move(lost_call_results_.at(id));
    lost_call_results_.erase(id);
    l.error.message += " (rank " + std::to_string(l.holder) +
                       " was not declared failed since, so the call was not re-sent)";
    on_result(l.holder, id, false, nullptr, 0, std::move(l.error));
  }
}

void EventLoop::resend_calls_on(int rank, const std::string& reason, std::vector<ObjectId>& calls) {
  const std::string gone = "rank " + std::to_string(rank) + ", which failed (" + reason + ")";
  std::vector<std::unique_ptr<PendingCall>> again;
  for (const auto& id : calls) {
    calls_inflight_.erase(id);
    if (!lost_call_results_.empty()) lost_call_results_.erase(id);  // its failure was held
    auto k = kept_calls_.find(id);
    if (k == kept_calls_.end()) {
      on_result(rank, id, false, nullptr, 0,
                detail::ErrorInfo{.kind = detail::ErrorKind::kActorDied,
                                  .rank = rank,
                                  .message = "the call producing " + id.str() +
                                             " went to an actor on " + gone +
                                             " before it answered (max_task_retries = 0: not "
                                             "re-sent; an actor without max_restarts is gone, "
                                             "create a new one)"});
      continue;
    }
    std::unique_ptr<PendingCall> c = std::move(k->second);
    kept_calls_.erase(k);
    if (c->call_retries == 0) {
      const int max = c->actor.max_task_retries;
      complete_error(*c->result,
                     detail::ErrorInfo{
                         .kind = detail::ErrorKind::kActorDied,
                         .rank = rank,
                         .message = "the call producing " + id.str() + " was in flight to actor " +
                                    c->actor.id.str() + " on " + gone +
                                    "; max_task_retries = " + std::to_string(max) + " used up"},
                     completions_);
      on_object_done(c->result);
      continue;
    }
    if (c->call_retries > 0) --c->call_retries;
    again.push_back(std::move(c));
  }
  // In each caller's order: re-sent calls reach the new incarnation as they were submitted.
  std::sort(again.begin(), again.end(), [](const auto& a, const auto& b) {
    return std::tie(a->actor.id.creator, a->actor.id.seq, a->seq) <
           std::tie(b->actor.id.creator, b->actor.id.seq, b->seq);
  });
  for (auto& c : again) {
    WEFT_LOG(Info) << "re-sending call " << c->result->id.str() << " (position " << c->seq
                   << ") to the restart of actor " << c->actor.id.str();
    dispatch_actor_call(std::move(c));
  }
}

uint8_t EventLoop::call_mode(const ActorId& id, int rank, uint64_t seq, bool skip) {
  CallerSeq& cs = call_seq_[id];
  if (cs.rank != rank) {
    if (cs.rank >= 0) {
      // A new incarnation: positions sent to an earlier one (completed, or re-sent now) go
      // unordered; every position not sent yet reaches this one in order, as a call or a skip.
      cs.base = cs.sent_end;
      serde::Buffer b;
      WireWriter w(b);
      w.put<ActorId>(id);
      w.put<uint64_t>(cs.base);
      w.put<uint64_t>(0);
      w.put<ObjectId>(ObjectId{});
      w.put<uint8_t>(3);
      send(rank, Msg::kActorCall, b);
    }
    cs.rank = rank;
  }
  cs.sent_end = std::max(cs.sent_end, seq + 1);
  if (seq >= cs.base) return skip ? 1 : 0;
  return skip ? 255 : 2;
}

}  // namespace weft::core
