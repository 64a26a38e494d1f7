// The owner's side of calls: holding tasks until their ref arguments exist, choosing a rank,
// tracking what is in flight, completing results, and serving borrowers' requests for values.
#include <algorithm>
#include <cstring>

#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/inline_budget.hpp"
#include "core/invoke.hpp"
#include "core/object_store_client.hpp"
#include "core/pg_wire.hpp"
#include "core/submit_wire.hpp"
#include "sched/feasibility.hpp"
#include "sched/policy.hpp"
#include "weft/detail/registry.hpp"

namespace weft::core {

void EventLoop::submit(std::unique_ptr<PendingCall> call) {
  if (call->kind == PendingCall::Kind::kActorCall) call->seq = call_seq_[call->actor.id].next++;
  std::vector<ObjectId> pending;
  for (const auto& r : call->refs) {
    if (r->done()) continue;
    pending.push_back(r->id);
    if (r->id.owner != rank_) fetch(r);
  }
  if (auto ready = deps_.hold(std::move(call), pending)) on_ready_call(std::move(ready));
}

void EventLoop::fetch(const StatePtr& s) {
  if (s->done() || s->id.owner == rank_) return;
  if (s->fetch_requested.exchange(true)) return;
  if (known_failed(s->id.owner)) return fail_owner_died(s);  // peer_failure.cpp
  serde::Buffer b;
  WireWriter w(b);
  w.put<ObjectId>(s->id);
  send(s->id.owner, Msg::kGetObject, b);
}

void EventLoop::on_object_done(const StatePtr& s) {
  if (auto it = subscribers_.find(s->id); it != subscribers_.end()) {
    std::vector<int> dests = std::move(it->second);
    subscribers_.erase(it);
    for (int d : dests) reply_object(d, *s);
  }
  if (!deps_.waits_for(s->id)) return;
  for (auto& call : deps_.done(s->id)) on_ready_call(std::move(call));
}

void EventLoop::send_skip(int host, const ActorId& actor, const PendingCall& call) {
  // The actor still has to see this position of the caller's order, or later calls would wait
  // for it forever: a call message flagged "skip", without arguments.
  const uint8_t mode = call_mode(actor, host, call.seq, true);
  if (mode == 255) return;  // below the caller's resume base at a restart: no order to keep
  serde::Buffer b;
  WireWriter w(b);
  w.put<ActorId>(actor);
  w.put<uint64_t>(call.seq);
  w.put<uint64_t>(call.fn_id);
  w.put<ObjectId>(call.result->id);
  w.put<uint8_t>(mode);
  send(host, Msg::kActorCall, b);
}

void EventLoop::fail_call(PendingCall& call, const detail::ErrorInfo& e) {
  if (call.kind == PendingCall::Kind::kActorCreate) actor_unplaced(call.actor.id, e);
  // actor_restarts.cpp: to the incarnation the caller's later calls reach (parked when that is
  // not known yet: a handle without rank, or one whose rank failed)
  if (call.kind == PendingCall::Kind::kActorCall && route_skip(call))
    send_skip(call.actor.rank, call.actor.id, call);
  complete_error(*call.result, e, completions_);
  on_object_done(call.result);
}

void EventLoop::on_ready_call(std::unique_ptr<PendingCall> call) {
  if (call->kind != PendingCall::Kind::kActorCall) return start_ready_call(std::move(call));
  // Per caller, an actor's calls leave in their positions' order: one ready before an earlier
  // one (still waiting for its arguments) waits here, so a restart between them cannot reorder
  // them (CallerSeq).
  const ActorId actor = call->actor.id;
  {
    CallerSeq& cs = call_seq_[actor];
    if (call->seq != cs.ready_next) {
      cs.early.emplace(call->seq, std::move(call));
      return;
    }
    ++cs.ready_next;
  }
  start_ready_call(std::move(call));
  // Looked up afresh each time: starting a call can add entries to call_seq_ (re-entrantly).
  for (;;) {
    CallerSeq& cs = call_seq_[actor];
    auto it = cs.early.find(cs.ready_next);
    if (it == cs.early.end()) return;
    std::unique_ptr<PendingCall> next = std::move(it->second);
    cs.early.erase(it);
    ++cs.ready_next;
    start_ready_call(std::move(next));
  }
}

void EventLoop::start_ready_call(std::unique_ptr<PendingCall> call) {
  for (const auto& r : call->refs) {
    if (r->status() == detail::ObjectStatus::kFailed) {
      fail_call(*call, r->error());  // an argument's error is the call's error
      return;
    }
  }
  switch (call->kind) {
    case PendingCall::Kind::kTask:
      dispatch_task(std::move(call));
      break;
    case PendingCall::Kind::kActorCall:
      dispatch_actor_call(std::move(call));
      break;
    case PendingCall::Kind::kActorCreate:
      dispatch_actor_create(std::move(call));
      break;
  }
}

Strategy to_strategy(const detail::SubmitOptions& o) {
  Strategy s;
  if (o.strategy == 1) s.policy = sched::Policy::kSpread;
  if (o.strategy == 2) {
    s.policy = sched::Policy::kNodeAffinity;
    s.node = o.affinity_node;
    s.soft = o.affinity_soft;
  }
  return s;
}

std::vector<std::pair<int, uint64_t>> EventLoop::arg_bytes_by_rank(const PendingCall& call) const {
  // Locality: ref arguments that lie in a node store, by holder. Only when they add up to more
  // than inline_threshold does moving the task beat moving the bytes.
  std::vector<std::pair<int, uint64_t>> out;
  uint64_t total = 0;
  for (const auto& r : call.refs) {
    const auto* sp = dynamic_cast<const StorePayload*>(r->payload.get());
    if (!sp) continue;
    total += sp->size();
    const int at = copy_source(*sp);
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) {
      return view_.info(e.first).node == view_.info(at).node;
    });
    if (it == out.end())
      out.emplace_back(at, sp->size());
    else
      it->second += sp->size();
  }
  const ObjectStoreClient* store = store_client();
  if (!store || total <= store->inline_threshold()) out.clear();
  return out;
}

namespace {
std::string call_label(uint64_t fn_id, const std::string& name) {
  const detail::FunctionEntry* fe = detail::find_function(fn_id);
  return task_label(fe ? fe->name : "function #" + std::to_string(fn_id), name);
}
}  // namespace

void EventLoop::log_repeated_warnings(std::chrono::steady_clock::time_point now, bool final) {
  for (const auto& [text, n] : warnings_.summary(now, final))
    WEFT_LOG(Warn) << n << " more like this one: " << text;
}

std::string EventLoop::describe_producer(const ObjectId& id) const {
  if (auto it = inflight_.find(id); it != inflight_.end())
    return "task " + call_label(it->second.fn_id, it->second.name) + " on rank " +
           std::to_string(it->second.rank);
  if (auto it = calls_inflight_.find(id); it != calls_inflight_.end())
    return "an actor call on rank " + std::to_string(it->second);
  return {};
}

void EventLoop::dispatch_task(std::unique_ptr<PendingCall> call) {
  if (call->placement.pg != 0 && call->pg_target < 0) return dispatch_pg_call(std::move(call));
  auto infeasible = [&](const std::string& why) {
    detail::ErrorInfo e;
    e.kind = detail::ErrorKind::kInfeasible;
    e.rank = rank_;
    e.function = call_label(call->fn_id, call->name);
    e.message = "task " + e.function + ": " + why;
    ops_.note_infeasible("task " + e.function, why);  // weft status lists it
    // Once per request shape; repeats are counted (log_repeated_warnings). Every ref gets its
    // error all the same.
    if (warnings_.note("infeasible " + e.message))
      WEFT_LOG(Warn) << "infeasible " << e.message << " (identical ones are counted, not logged)";
    fail_call(*call, e);
  };
  int target = call->pg_target;
  bool reserved = false;
  if (target >= 0) {
    placer_.place_at(target);
  } else {  // task_placer.hpp: feasible at all, then where
    TaskPlacer::Placed p =
        placer_.place(call->need, call->strategy, arg_bytes_by_rank(*call), failed_);
    if (p.rank < 0) return infeasible(p.why);
    if (!p.fallback.empty()) WEFT_LOG(Info) << p.fallback;
    target = p.rank;
    reserved = p.reserved;
  }
  InFlight& flight = inflight_[call->result->id];  // filled in place, and found once
  flight.rank = target;
  flight.reserved = reserved;
  flight.need = call->need;
  flight.fn_id = call->fn_id;
  flight.name = call->name;
  flight.retry.reset();  // keep_for_retry sets it
  ++ops_.tasks_submitted;
  auto fill = [&](ExecItem& item) {
    item.kind = ExecItem::Kind::kTask;
    item.owner = rank_;
    item.ret = call->result->id;
    item.fn_id = call->fn_id;
    item.need = call->need;
    item.args = resolve_args(*call, /*stored_by_location=*/true);  // stored_args.cpp
    item.depth = call->depth;
    if (!call->placement.is_default() || !call->name.empty()) {  // most tasks: neither
      ExecRare& rare = item.rare.mut();
      rare.placement = call->placement;
      rare.name = std::move(call->name);
    }
    item.strategy = call->strategy;
    item.holds = refs_sent_with(*call, target);  // stored_args.cpp: the executor borrows them
  };
  // The owner keeps what it sends while the task may be retried (task_retry.cpp): the item itself
  // when it goes to another rank (the message is written from it), a copy for a local body. The
  // item is built where it will live: no move of it (a few hundred bytes) on the way.
  RetrySpec* spec = keep_for_retry(*call, flight, target);
  if (target == rank_) {
    auto item = std::make_unique<ExecItem>();
    fill(*item);
    if (spec) spec->item = *item;
    return enqueue_exec(std::move(item));
  }
  if (spec) {
    fill(spec->item);
    return send_submit(target, spec->item, spec->item.holds);
  }
  ExecItem item;
  fill(item);
  std::vector<StatePtr> holds = std::move(item.holds);
  send_submit(target, item, std::move(holds));
}

void EventLoop::send_submit(int dest, const ExecItem& item, std::vector<StatePtr> holds) {
  MessageScratch::Lease lease(scratch_);
  serde::Buffer& b = lease.buffer();
  WireWriter w(b);
  put_submit_header(w, item);
  put_ref_ids(w, holds);
  w.put_bytes(item.args.data(), item.args.size());
  send_with_refs(dest, Msg::kSubmitTask, b, std::move(holds));
}

void EventLoop::handle_task_moved(int src, const char* data, size_t len) {
  // A victim gave a queued task of ours to an idle rank (work_stealing.cpp): failures of that
  // rank now fail it, and the load view follows it.
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  int to = r.get<int32_t>();
  if (to < 0 || to >= size_)
    throw SerializationError("kTaskMoved names rank " + std::to_string(to));
  auto it = inflight_.find(id);
  if (it == inflight_.end()) return;  // its result came first
  InFlight& f = it->second;
  placer_.moved(f.rank, to, f.need, &f.reserved, /*take_free_slot=*/true);
  f.rank = to;
  if (f.retry) f.retry->rank = to;  // the attempt runs there now
  if (known_failed(to)) {
    detail::ErrorInfo e{.kind = detail::ErrorKind::kObjectLost,
                        .rank = to,
                        .message = "the task producing " + id.str() + " moved to rank " +
                                   std::to_string(to) + ", which has failed"};
    if (f.retry && retry_task(f, id, e)) return;  // task_retry.cpp
    e.message += retry_note(f, /*system_failure=*/true);
    on_result(to, id, false, nullptr, 0, std::move(e));
  }
}

void EventLoop::on_result(int src, const ObjectId& id, bool ok, const char* data, size_t len,
                          detail::ErrorInfo err, std::shared_ptr<const detail::Payload> stored,
                          std::vector<StatePtr> contained, std::vector<char>* movable) {
  if (auto it = inflight_.find(id); it != inflight_.end()) {
    InFlight& f = it->second;
    // From an attempt the owner gave up on when its rank was declared failed: the task runs
    // elsewhere now, and only that attempt's result counts.
    if (src != f.rank && src != rank_ && known_failed(src)) return;
    if (!ok && f.retry && err.kind == detail::ErrorKind::kTask && f.retry->exceptions) {
      if (retry_task(f, id, err)) return;  // task_retry.cpp
      err.message += retry_note(f, /*system_failure=*/false);
    }
    placer_.finished(f.rank, f.need, f.reserved);
    ++(ok ? ops_.tasks_finished : ops_.tasks_failed);
    inflight_.erase(it);
  } else if (!calls_inflight_.empty()) {
    auto c = calls_inflight_.find(id);
    // From an incarnation given up on when its rank was declared failed: the call went to the
    // restart (resend_calls_on), and only the restart's answer counts.
    if (c != calls_inflight_.end() && src != c->second && src != rank_ && known_failed(src)) return;
    if (c != calls_inflight_.end()) calls_inflight_.erase(c);
    if (!kept_calls_.empty()) kept_calls_.erase(id);
  }
  arg_holds_.erase(id);  // the task is over: its stored arguments may go
  if (StatePtr s = objects_.find(id)) {
    if (ok && !stored) {  // a small result: inline within the owner's limit, else in the store
      try {
        stored =
            owned_payload(id, movable ? std::move(*movable) : std::vector<char>(data, data + len),
                          /*may_wait=*/false);
      } catch (const std::exception& e) {
        ok = false;
        err.kind = dynamic_cast<const ObjectStoreFullError*>(&e) ? detail::ErrorKind::kStoreFull
                                                                 : detail::ErrorKind::kGeneric;
        err.rank = rank_;
        err.message = "the result " + id.str() + " passed rank " + std::to_string(rank_) +
                      "'s inline_owner_limit and the node store could not take it: " + e.what();
      }
    }
    if (ok && !contained.empty() && !s->done())  // kept while the value lives (refcount.cpp)
      s->contained = std::make_unique<std::vector<StatePtr>>(std::move(contained));
    if (ok)
      complete_ok(*s, std::move(stored), completions_);
    else
      complete_error(*s, std::move(err), completions_);
    on_object_done(s);
  }
}

void EventLoop::handle_task_result(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  bool ok = r.get<uint8_t>() != 0;
  if (ok) {
    std::vector<StatePtr> contained = accept_refs(get_ref_ids(r));
    auto [p, n] = r.rest();
    on_result(src, id, true, p, n, {}, nullptr, std::move(contained));
  } else {
    on_result(src, id, false, nullptr, 0, get_error(r));
  }
}

void EventLoop::reply_object(int dest, const ObjectState& s) {
  if (reply_stored(dest, s)) return;  // a store-backed value: the borrower pulls it
  serde::Buffer b;
  WireWriter w(b);
  w.put<ObjectId>(s.id);
  bool ok = s.status() == detail::ObjectStatus::kReady;
  w.put<uint8_t>(ok ? 1 : 0);
  std::vector<StatePtr> contained;  // refs inside the value: the borrower borrows them too
  if (ok) {
    add_contained(contained, s);
    put_ref_ids(w, contained);
    if (s.payload) w.put_bytes(s.payload->data(), s.payload->size());
  } else {
    put_error(w, s.error());
  }
  send_with_refs(dest, Msg::kObjectValue, b, std::move(contained));
}

void EventLoop::handle_get_object(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  StatePtr s = objects_.find(id);
  if (!s) {
    ObjectState lost(id);
    lost.failure = std::make_unique<detail::ErrorInfo>(detail::ErrorInfo{
        .kind = detail::ErrorKind::kObjectLost,
        .rank = rank_,
        .message = id.str() + " is no longer held by its owner, rank " + std::to_string(rank_) +
                   " (every ref to it on the owner was dropped)"});
    lost.status_.store(detail::ObjectStatus::kFailed);
    reply_object(src, lost);
    return;
  }
  if (s->done()) {
    reply_object(src, *s);
  } else {
    subscribers_[id].push_back(src);
  }
}

void EventLoop::handle_object_value(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  bool ok = r.get<uint8_t>() != 0;
  // Accepted even when nobody waits any more: dropping them then returns their credits.
  std::vector<StatePtr> contained;
  if (ok) contained = accept_refs(get_ref_ids(r));
  StatePtr s = objects_.find(id);
  if (!s || s->done()) return;
  if (!contained.empty())
    s->contained = std::make_unique<std::vector<StatePtr>>(std::move(contained));
  if (ok) {
    auto [p, n] = r.rest();
    complete_ok(*s, std::make_shared<detail::InlinePayload>(std::vector<char>(p, p + n)),
                completions_);
  } else {
    complete_error(*s, get_error(r), completions_);
  }
  on_object_done(s);
}

// --- actors, the caller's side ----------------------------------------------------------------

void EventLoop::dispatch_actor_create(std::unique_ptr<PendingCall> call) {
  detail::ErrorInfo e;
  e.rank = rank_;
  e.function = detail::class_name(call->fn_id);
  if (call->actor.rank < 0) {                                             // first pass: place it
    for (const auto& r : call->refs) add_contained(call->contained, *r);  // refs in ref values
    if (!call->refs.empty()) {  // (without refs the block is final: no self-move)
      call->args = resolve_args(*call, /*stored_by_location=*/false);
      call->refs.clear();
    }
    if (call->placement.pg != 0 && call->pg_target < 0) return dispatch_pg_call(std::move(call));
    auto never = [&](const std::string& why) {
      e.kind = detail::ErrorKind::kInfeasible;
      e.message = "actor " + e.function + " can never be placed: " + why;
      fail_call(*call, e);
    };
    if (call->pg_target < 0) {  // a hard affinity names its node first
      if (auto why = placer_.affinity_infeasible(call->need, call->strategy)) return never(*why);
      if (auto why = sched::check_feasible(call->need, view_)) return never(why->message);
    }
    int best = call->pg_target;
    if (best >= 0) {
      actor_placer_.count(best);
    } else {  // actor_placer.hpp
      ActorPlacer::Placed p = actor_placer_.place(call->need, call->strategy, failed_);
      if (p.rank < 0) return never(p.why);
      if (!p.fallback.empty())
        WEFT_LOG(Info) << "soft node affinity: actor " << e.function << " asked for " << p.fallback;
      best = p.rank;
    }
    call->actor.rank = best;
    if (!call->create_opts->name.empty()) {
      // Named: the head must accept the name before the actor exists.
      auto reply = new_state(ObjectId{rank_, 1, next_object_seq()});
      call->refs.push_back(reply);
      request_named(call->create_opts->name, call->actor, reply, true);
      deps_.hold(std::move(call), {reply->id});
      return;
    }
  } else if (!call->refs.empty()) {  // second pass: the head answered
    const auto& p = call->refs.back()->payload;
    detail::ActorRef holder;
    std::memcpy(&holder, p->data() + 1, sizeof holder);
    if (p->data()[0] == 0) {
      actor_placer_.uncount(call->actor.rank);
      e.kind = detail::ErrorKind::kGeneric;
      e.message = "an actor named '" + call->create_opts->name + "' already exists (" +
                  holder.id.str() + " on rank " + std::to_string(holder.rank) +
                  "); names are unique per job";
      fail_call(*call, e);
      return;
    }
  }
  keep_life(*call);  // max_restarts: the creator restarts it (actor_restarts.cpp)
  send_creation(*call, 0, std::move(call->contained));
  actor_placed(call->actor.id, call->actor.rank);  // handles that left without a rank
  std::vector<char> bytes(1 + sizeof(detail::ActorRef));
  bytes[0] = 1;
  std::memcpy(bytes.data() + 1, &call->actor, sizeof call->actor);
  complete_ok(*call->result, std::make_shared<detail::InlinePayload>(std::move(bytes)),
              completions_);
}

void EventLoop::dispatch_actor_call(std::unique_ptr<PendingCall> call) {
  if (call->actor.rank < 0 && !resolve_unplaced(call)) return;  // pg_actors.cpp
  if (known_failed(call->actor.rank)) {
    if (call->actor.max_restarts == 0) return fail_dead_actor_call(*call);  // peer_failure.cpp
    if (!relocate_call(call)) return;  // waits for the restart (actor_restarts.cpp)
  }
  if (call->actor.max_task_retries != 0) keep_call(*call);  // re-sent if its actor restarts
  const uint8_t mode = call_mode(call->actor.id, call->actor.rank, call->seq, false);
  calls_inflight_.emplace(call->result->id, call->actor.rank);
  std::vector<char> args = resolve_args(*call, /*stored_by_location=*/true);
  std::vector<StatePtr> contained = refs_sent_with(*call, call->actor.rank);  // the actor borrows
  serde::Buffer b;
  WireWriter w(b);
  w.put<ActorId>(call->actor.id);
  w.put<uint64_t>(call->seq);
  w.put<uint64_t>(call->fn_id);
  w.put<ObjectId>(call->result->id);
  w.put<uint8_t>(mode);
  put_ref_ids(w, contained);  // only when not skipped (fail_call's skips carry no arguments)
  w.put_bytes(args.data(), args.size());
  send_with_refs(call->actor.rank, Msg::kActorCall, b, std::move(contained));
}

void EventLoop::kill_actor(const detail::ActorRef& a) {
  int rank = a.rank;
  if (auto it = lives_.find(a.id); it != lives_.end()) {
    it->second.dead = true;  // killed: never restarted
    rank = it->second.rank;  // the current incarnation's
  } else if (a.rank < 0) {
    return kill_unplaced(a);  // pg_actors.cpp
  } else if (known_failed(rank) && a.max_restarts != 0) {
    rank = placed_rank(a.id);  // restarted elsewhere
  }
  if (rank < 0 || known_failed(rank)) return;
  serde::Buffer b;
  WireWriter w(b);
  w.put<ActorId>(a.id);
  send(rank, Msg::kKillActor, b);
}

}  // namespace weft::core
