// Actors hosted on this rank: construction through the resource gate, calls reordered into each
// caller's submission order, at most max_concurrency calls running, and death (kill or a failed
// constructor) turning every waiting and later call into ActorDiedError.
#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/exec_context.hpp"
#include "core/invoke.hpp"
#include "core/pg_wire.hpp"
#include "weft/detail/registry.hpp"

namespace weft::core {

void EventLoop::handle_create_actor(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto item_ptr = std::make_unique<ExecItem>();
  ExecItem& item = *item_ptr;
  item.kind = ExecItem::Kind::kActorCreate;
  item.owner = src;
  ExecRare& rare = item.rare.mut();  // a creation carries its actor's identity
  rare.actor = r.get<ActorId>();
  item.fn_id = r.get<uint64_t>();
  rare.max_concurrency = std::max(1, r.get<int32_t>());
  item.need = sched::ResourceSet::from_bytes(r.get_str());
  rare.placement = get_placement(r);
  rare.name = r.get_str();
  const uint32_t incarnation = r.get<uint32_t>();
  const int32_t max_restarts = r.get<int32_t>();
  CheckpointPolicy policy;
  policy.every = r.get<int32_t>();
  policy.interval = std::chrono::milliseconds(r.get<int64_t>());
  const bool expect_checkpoint = r.get<uint8_t>() != 0;
  item.holds = accept_refs(get_ref_ids(r));  // refs nested in the arguments: borrowed here
  auto [p, n] = r.rest();
  item.args.assign(p, p + n);

  auto& slot = actors_[rare.actor];
  if (!slot) {
    slot = std::make_unique<ActorInstance>();
    slot->id = rare.actor;
  } else if (slot->state == ActorInstance::State::kDead) {
    return;  // killed before its creation message arrived
  }
  ActorInstance& a = *slot;
  a.class_id = item.fn_id;
  a.max_concurrency = rare.max_concurrency;
  a.name = rare.name;
  a.incarnation = incarnation;
  a.policy = policy;
  a.expect_checkpoint = expect_checkpoint;
  a.ckpt = make_checkpointer(a, max_restarts != 0);  // actor_host_checkpoints.cpp
  if (auto it = orphan_calls_.find(rare.actor); it != orphan_calls_.end()) {
    auto calls = std::move(it->second);
    orphan_calls_.erase(it);
    for (auto& [caller, c] : calls) accept_call(a, std::move(c));
  }
  enqueue_exec(std::move(item_ptr));
}

void EventLoop::actor_created(const ActorId& id, std::shared_ptr<void> obj, detail::ErrorInfo err) {
  auto it = actors_.find(id);
  if (it == actors_.end()) return;
  ActorInstance& a = *it->second;
  if (a.state == ActorInstance::State::kDead) return;  // killed while constructing: obj dies here
  if (err.kind != detail::ErrorKind::kNone) {
    kill_local_actor(a, "its constructor raised " + err.type_name + ": " + err.message);
    return;
  }
  a.object = std::move(obj);
  a.state = ActorInstance::State::kAlive;
  pump_actor(a);
}

void EventLoop::handle_actor_call(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ActorId>();
  ActorCallItem c;
  c.caller = src;
  c.seq = r.get<uint64_t>();
  c.method = r.get<uint64_t>();
  c.ret = r.get<ObjectId>();
  const uint8_t mode = r.get<uint8_t>();  // 0 call, 1 skip, 2 unordered, 3 resume
  c.skip = mode == 1;
  c.unordered = mode == 2;
  c.resume = mode == 3;
  if (c.resume) return route_call(id, std::move(c));
  if (!c.skip) c.holds = accept_refs(get_ref_ids(r));  // refs nested in the arguments
  auto [p, n] = r.rest();
  c.args.assign(p, p + n);
  if (!c.skip && fetch_stored_args(id, c)) return;  // its stored arguments pinned first
  route_call(id, std::move(c));
}

void EventLoop::route_call(const ActorId& id, ActorCallItem c) {
  auto it = actors_.find(id);
  if (it == actors_.end()) {
    // A handle passed to another rank can call before the creator's message got here.
    const int caller = c.caller;
    orphan_calls_[id].emplace_back(caller, std::move(c));
    return;
  }
  accept_call(*it->second, std::move(c));
}

void EventLoop::accept_call(ActorInstance& a, ActorCallItem call) {
  if (a.state == ActorInstance::State::kDead) {
    if (!call.skip && !call.resume) fail_actor_call(a, call);
    return;
  }
  const int caller = call.caller;
  const uint64_t seq = call.seq;
  const bool skip = call.skip;  // a second skip is harmless: dropped without a warning
  if (call.resume) {            // a restart: this caller's earlier positions reach it unordered
    a.order.start_at(caller, seq, a.ready);
  } else if (call.unordered) {
    a.ready.push_back(std::move(call));  // checked against its checkpoint once restored (pump)
  } else if (!a.order.accept(caller, seq, std::move(call), a.ready) && !skip)
    WEFT_LOG(Warn) << "actor " << a.id.str() << ": dropped a second call at position " << seq
                   << " from rank " << caller;
  pump_actor(a);
}

void EventLoop::pump_actor(ActorInstance& a) {
  if (a.state != ActorInstance::State::kAlive) return;
  while (a.running < a.max_concurrency && !a.ready.empty()) {
    ActorCallItem c = std::move(a.ready.front());
    a.ready.pop_front();
    if (c.skip) continue;
    if (c.unordered && a.ckpt && a.ckpt->completed(c.caller, c.seq)) {
      reply_completed_before(a, c);  // its effect came back with the checkpoint
      continue;
    }
    ++a.running;
    const ObjectId ret = c.ret;
    const uint64_t method = c.method;
    const bool checkpoint_now = c.method == detail::actor_checkpoint_method();
    if (checkpoint_now && !a.ckpt) a.ckpt = make_checkpointer(a, true);
    const bool state_call =
        c.method == detail::actor_state_method() || c.method == detail::actor_load_state_method();
    auto job = [this, id = a.id, cls = a.class_id, obj = a.object, placement = a.placement,
                ckpt = a.ckpt, checkpoint_now, state_call, concurrency = a.max_concurrency,
                c = std::move(c)]() mutable {
      const auto t0 = std::chrono::steady_clock::now();
      serde::Buffer out;
      ExecContext ctx{0, ""};
      ctx.placement = &placement;
      // A large result goes straight into the store, unless a checkpointer may keep the call's
      // encoded result or drop it when its checkpoint fails.
      DirectResult direct{c.ret};
      if (!ckpt) ctx.direct = &direct;
      std::vector<StatePtr> contained;
      detail::ErrorInfo e;
      if (checkpoint_now) {  // weft::checkpoint(handle): ready once the file is durable
        e = ckpt ? run_guarded(rank_, "weft::checkpoint",
                               [&] {
                                 ckpt->note_call(c.caller, c.seq);
                                 ckpt->write(obj.get());
                               })
                 : detail::ErrorInfo{.kind = detail::ErrorKind::kGeneric,
                                     .rank = rank_,
                                     .message =
                                         "weft::checkpoint: checkpoints need a serializable "
                                         "class and max_concurrency = 1"};
      } else if (state_call) {  // a whole-job checkpoint takes the state, or a restore loads it
        e = run_state_call(cls, concurrency, c, obj.get(), out);
        if (ckpt) ckpt->note_call(c.caller, c.seq);
      } else {
        e = invoke_registered(rank_, c.method, obj.get(), call_args(c.args, c.pins), ctx, out,
                              "method", &contained);
        if (ckpt) {  // after the call, before its result leaves: no completed call is lost
          // Its result too, when small and free of refs: a restart answers a re-sent call
          // that had completed with it (actor_checkpoints.hpp).
          const bool keep = e.kind == detail::ErrorKind::kNone && contained.empty() &&
                            out.size() <= CheckpointState::kMaxResultBytes;
          std::vector<char> kept;
          if (keep) kept.assign(out.data(), out.data() + out.size());
          ckpt->note_call(c.caller, c.seq, keep ? &kept : nullptr);
          if (ckpt->due(std::chrono::steady_clock::now())) {
            detail::ErrorInfo we =
                run_guarded(rank_, "actor checkpoint", [&] { ckpt->write(obj.get()); });
            if (we.kind != detail::ErrorKind::kNone) {
              e = we;
              e.message = "the call ran, but the actor's checkpoint after it failed: " + we.message;
              out.take();
              contained.clear();
            }
          }
        }
      }
      obj.reset();
      bool ok = e.kind == detail::ErrorKind::kNone;
      std::vector<char> value = out.take();
      const int64_t stored = store_result(c.ret, direct, value, ok, e);  // large values: node store
      if (!ok) contained.clear();
      note_body(c.method, t0);
      const bool announce = ckpt && ckpt->take_first_write();  // before the result: see header
      run_or_post([id, c = std::move(c), ok, value = std::move(value), e = std::move(e), stored,
                   contained = std::move(contained), announce](EventLoop& l) mutable {
        if (announce) l.actor_checkpointed(id);  // a restart must then find a checkpoint
        if (stored >= 0)
          l.send_stored_result(c.ret.owner, c.ret, static_cast<size_t>(stored),
                               std::move(contained));
        else
          l.send_result(c.ret.owner, c.ret, ok, std::move(value), e, std::move(contained));
        auto it = l.actors_.find(id);
        if (it == l.actors_.end()) return;
        ActorInstance& a = *it->second;
        --a.running;
        if (a.state == ActorInstance::State::kDead) {
          if (a.running == 0) a.object.reset();
          return;
        }
        l.pump_actor(a);
      });
    };
    run_task_job(std::move(job), ret, method);  // on the admitting thread when allowed, like a task
  }
}

void EventLoop::fail_actor_call(const ActorInstance& a, const ActorCallItem& c) {
  detail::ErrorInfo e;
  e.kind = detail::ErrorKind::kActorDied;
  e.rank = rank_;
  const detail::FunctionEntry* fe = detail::find_function(c.method);
  e.function = fe ? fe->name : "";
  e.message = "actor " + detail::class_name(a.class_id) + " " + a.id.str() + " on rank " +
              std::to_string(rank_) + " is dead: " + a.death;
  send_result(c.ret.owner, c.ret, false, {}, e);
}

void EventLoop::kill_local_actor(ActorInstance& a, const std::string& why) {
  if (a.state == ActorInstance::State::kDead) return;
  a.state = ActorInstance::State::kDead;
  a.death = why;
  WEFT_LOG(Info) << "actor " << a.id.str() << " died: " << why;
  for (const auto& c : a.ready)
    if (!c.skip) fail_actor_call(a, c);
  a.ready.clear();
  a.order.drain([&](const ActorCallItem& c) {
    if (!c.skip) fail_actor_call(a, c);
  });
  gate_release(a.held, a.placement, a.grant);
  a.held = sched::ResourceSet{};
  a.grant = sched::GpuGrant{};
  if (a.running == 0) a.object.reset();
  if (!a.name.empty()) send_name_release(a.name, a.id);
  start_ready_exec();
}

void EventLoop::handle_kill_actor(const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ActorId>();
  if (r.remaining() > 0 && r.get<uint8_t>() == 1) {  // its host tells the creator: killed
    if (auto it = lives_.find(id); it != lives_.end()) it->second.dead = true;
    return;
  }
  auto& slot = actors_[id];
  if (!slot) {  // the kill overtook the creation: leave a tombstone
    slot = std::make_unique<ActorInstance>();
    slot->id = id;
  }
  kill_local_actor(*slot, "killed by weft::kill");
  if (auto it = orphan_calls_.find(id); it != orphan_calls_.end()) {
    auto calls = std::move(it->second);
    orphan_calls_.erase(it);
    for (auto& [caller, c] : calls) accept_call(*slot, std::move(c));
  }
  // The creator must not restart a killed actor if this rank fails later (actor_restarts.cpp).
  if (id.creator != rank_ && !known_failed(id.creator)) {
    serde::Buffer b;
    WireWriter w(b);
    w.put<ActorId>(id);
    w.put<uint8_t>(1);
    send(id.creator, Msg::kKillActor, b);
  }
}

}  // namespace weft::core

namespace weft::detail {
namespace {
// ActorHandle::ready(): a call that runs nothing. It queues behind the constructor like any call,
// so it completes once the actor is alive, and fails as any call does when it never will be.
void invoke_ready(void*, const CallArgs&, serde::Buffer&) {}
}  // namespace

uint64_t actor_checkpoint_method() {
  static const char key = 0;
  static const uint64_t id =
      register_function(&key, sizeof key, "weft::checkpoint", &invoke_ready, 1);
  return id;
}

uint64_t actor_state_method() {
  static const char key = 0;
  static const uint64_t id =
      register_function(&key, sizeof key, "weft::JobCheckpoint::save(actor)", &invoke_ready, 1);
  return id;
}

uint64_t actor_load_state_method() {
  static const char key = 0;
  static const uint64_t id =
      register_function(&key, sizeof key, "weft::JobRestore::actor", &invoke_ready, 1);
  return id;
}

uint64_t actor_ready_method() {
  static const char key = 0;
  static const uint64_t id =
      register_function(&key, sizeof key, "weft::ActorHandle::ready", &invoke_ready, 1);
  return id;
}

namespace {
// Registered when the library loads, as every WEFT_REMOTE is: once the runtime's threads run,
// they read the registry without its lock (find_function), so nothing may be added to it then.
// (The first call used to register each of these, on a loop thread, while pool threads looked up
// other functions: ThreadSanitizer's report, a rehash under a reader.)
[[maybe_unused]] const bool kBuiltinMethodsRegistered =
    (actor_checkpoint_method(), actor_state_method(), actor_load_state_method(),
     actor_ready_method(), true);
}  // namespace

}  // namespace weft::detail
