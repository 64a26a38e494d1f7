// The runtime side of include/weft/detail/runtime_api.hpp: what the public templates call.
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <optional>
#include <thread>

#include "common/duration_text.hpp"
#include "common/log.hpp"
#include "common/timeline.hpp"
#include "core/event_loop.hpp"
#include "core/exec_context.hpp"
#include "core/idle_backoff.hpp"
#include "core/inline_budget.hpp"
#include "core/object_store_client.hpp"
#include "weft/detail/call_args.hpp"
#include "weft/detail/store_api.hpp"
#include "weft/errors.hpp"

namespace weft::detail {
namespace {

using core::EventLoop;
using Clock = std::chrono::steady_clock;

EventLoop& loop() {
  EventLoop* l = core::current_loop();
  if (!l)
    throw Error("Weft is not running: call weft::run(argc, argv, driver) or create a "
                "weft::Runtime first");
  return *l;
}

Clock::time_point deadline_of(std::chrono::nanoseconds timeout) {
  return timeout.count() < 0 ? Clock::time_point::max() : Clock::now() + timeout;
}

void request_fetch(EventLoop& l, const StatePtr& s) {
  if (s->id.owner != l.rank() && !s->fetch_requested.load(std::memory_order_relaxed))
    l.post([s](EventLoop& loop) { loop.fetch(s); });
}

// Lends the calling task's CPU slot to the rank while it blocks, so nested tasks can run.
class CpuLoan {
 public:
  explicit CpuLoan(EventLoop& l) : l_(l) {
    core::ExecContext* ctx = core::current_exec();
    cpus_ = ctx ? ctx->cpus : 0;
    if (cpus_ > 0) l_.post([c = cpus_](EventLoop& loop) { loop.release_cpu(c); });
  }
  ~CpuLoan() {
    if (cpus_ > 0) l_.post([c = cpus_](EventLoop& loop) { loop.acquire_cpu(c); });
  }

 private:
  EventLoop& l_;
  double cpus_;
};

// Marks this thread as driving the loop's turns while it waits (EventLoop::begin_driving).
class Driving {
 public:
  explicit Driving(EventLoop& l) : l_(l) { l_.begin_driving(); }
  ~Driving() { l_.end_driving(); }
  // Runs one queued job here, not counted as driving meanwhile: a job may run long, and the
  // loop thread must not step aside for a thread that is not turning the loop.
  bool help() {
    l_.end_driving();
    bool ran = l_.pool().help_one();
    l_.begin_driving();
    return ran;
  }

 private:
  EventLoop& l_;
};

// Blocks until pred() or the deadline. First this thread runs the loop's turns itself (so the
// request leaves and the reply is read without waking the loop thread): spinning for
// loop_spin_us (less while its yields show that another thread wants the core:
// idle_backoff.hpp), then, holding no CPU slot (a task lends it, so nested tasks can run) and
// running queued jobs when it is a pool thread, yielding between turns until loop_spin_us +
// loop_yield_us. Then it hands the loop back and parks on the completion sequence.
// `awaited`: the one object waited for, whose task may then run on this thread (loop_turns.cpp).
// `recheck`: for a pred that may answer false while it is true (wait_some's throttled pass), the
// longest it parks before asking again; 0 when pred is exact (parked until a completion).
template <class Pred>
bool block_until(EventLoop& l, Pred pred, Clock::time_point deadline,
                 const ObjectId* awaited = nullptr,
                 std::chrono::microseconds recheck = std::chrono::microseconds(0)) {
  if (pred()) return true;
  const bool in_pool = core::current_exec() != nullptr;
  const auto start = Clock::now();
  std::optional<CpuLoan> loan;
  {
    Driving driving(l);
    core::IdleBackoff& backoff = core::IdleBackoff::this_thread(l.spin_for(), l.yield_for());
    auto last_work = start;
    while (true) {
      bool work = false;
      if (!l.drive_turn(awaited, &work, deadline == Clock::time_point::max()))
        for (int i = 0; i < 16; ++i) _mm_pause();  // another thread runs this turn
      if (pred()) return true;
      const auto now = Clock::now();
      if (now >= deadline) return false;
      if (l.stopped()) throw Error("the Weft runtime stopped while this thread was waiting");
      if (work) last_work = now;
      const auto step = backoff.step(now - last_work);
      if (step == core::IdleBackoff::Step::kSpin) continue;
      if (step == core::IdleBackoff::Step::kPark) break;
      if (!loan) loan.emplace(l);
      if (in_pool && driving.help()) {
        last_work = Clock::now();
        continue;
      }
      backoff.yield();
    }
  }
  if (!loan) loan.emplace(l);
  while (true) {
    uint32_t seen = l.completions().seq();
    if (pred()) return true;
    if (Clock::now() >= deadline) return false;
    if (l.stopped()) throw Error("the Weft runtime stopped while this thread was waiting");
    if (in_pool && l.pool().help_one()) continue;
    auto cap = in_pool ? Clock::now() + std::chrono::microseconds(200) : deadline;
    if (recheck.count() > 0) cap = std::min(cap, Clock::now() + recheck);
    l.completions().park(seen, std::min(cap, deadline));
  }
}

}  // namespace

ObjectState::~ObjectState() {
  EventLoop* l = core::current_loop();
  if (!l) return;
  l->objects().erase_expired(id);
  // A borrower's credits go back to the owner (batched by the loop: src/core/refcount.cpp).
  uint32_t credits = borrow_credits.load(std::memory_order_relaxed);
  if (credits > 0 && id.owner != l->rank()) l->queue_release(id, credits);
}

int my_rank() { return loop().rank(); }
int world_size() { return loop().size(); }
bool runtime_active() { return core::current_loop() != nullptr; }

uint64_t job_tag() {
  const EventLoop* l = core::current_loop();
  // The job id is 16 hex digits (net::discover_topology), made by rank 0 and sent to all.
  return l ? std::strtoull(l->topology().job_id.c_str(), nullptr, 16) : 0;
}

void throw_foreign_ref(const std::string& what, uint64_t tag) {
  char theirs[17], ours[17];
  std::snprintf(theirs, sizeof theirs, "%016llx", static_cast<unsigned long long>(tag));
  std::snprintf(ours, sizeof ours, "%016llx", static_cast<unsigned long long>(job_tag()));
  throw SerializationError(
      what + " was serialized by another job (job " + theirs + "; this is job " + ours +
      "): refs and actor handles name objects and actors of the job that made them, which "
      "are gone with it. Save the value itself (weft::get it before saving, or "
      "JobCheckpoint::save the ref, which saves its value) and put it again in the new job");
}

StatePtr new_owned_state() {
  EventLoop& l = loop();
  auto s = core::new_state(ObjectId{l.rank(), 0, l.next_object_seq()});
  l.objects().insert(s);
  return s;
}

StatePtr put_bytes(std::vector<char> bytes, std::vector<StatePtr> contained) {
  EventLoop& l = loop();
  // Kept with the value, so a reader that deserializes it finds the refs alive; nobody else
  // knows the new id before this returns, so setting it after put_sized is safe.
  auto keep = [&contained](ObjectState& s) {
    dedupe_refs(contained);
    if (!contained.empty())
      s.contained = std::make_unique<std::vector<StatePtr>>(std::move(contained));
  };
  if (core::ObjectStoreClient* c = core::store_client(); c && bytes.size() > c->inline_threshold()) {
    StatePtr s = put_sized(
        bytes.size(),
        [](char* dst, const void* v) {
          const auto& b = *static_cast<const std::vector<char>*>(v);
          std::memcpy(dst, b.data(), b.size());
        },
        &bytes);
    keep(*s);
    return s;
  }
  timeline::Span span(timeline::Kind::kPut, 0, bytes.size());
  auto s = core::new_state(ObjectId{l.rank(), 0, l.next_object_seq()});
  keep(*s);
  // Complete before publishing in the table, so a borrower's request never sees it pending.
  s->payload = core::owned_payload(s->id, std::move(bytes));  // inline within the owner's limit
  s->status_.store(ObjectStatus::kReady, std::memory_order_release);
  l.objects().insert(s);
  return s;
}

StatePtr state_for(const ObjectId& id) {
  EventLoop& l = loop();
  if (id.owner == l.rank()) {
    if (StatePtr s = l.objects().find(id)) return s;
    auto lost = core::new_state(id);
    lost->failure = std::make_unique<ErrorInfo>(ErrorInfo{
        .kind = ErrorKind::kObjectLost,
        .rank = l.rank(),
        .message = id.str() + " came back to its owner after every local ref was dropped"});
    lost->status_.store(ObjectStatus::kFailed, std::memory_order_release);
    return lost;
  }
  bool created = false;
  return l.objects().find_or_create(id, &created);
}

bool wait_done(const StatePtr& s, std::chrono::nanoseconds timeout) {
  if (s->done()) return true;
  timeline::Span span(timeline::Kind::kGet, 0, 1);  // only gets that wait are recorded
  EventLoop& l = loop();
  request_fetch(l, s);
  // Without a deadline, the task producing it may run on this thread (a deadline must hold).
  const ObjectId* awaited = timeout.count() < 0 ? &s->id : nullptr;
  return block_until(l, [&] { return s->done(); }, deadline_of(timeout), awaited);
}

std::vector<bool> wait_some(const std::vector<StatePtr>& states, size_t num_returns,
                            std::chrono::nanoseconds timeout) {
  std::vector<bool> done(states.size(), false);
  if (states.empty()) return done;
  EventLoop& l = loop();
  for (const auto& s : states) request_fetch(l, s);
  // The predicate runs after every loop turn the waiter drives, often one completion each, so
  // a pass over every ref each time would make waiting for n refs O(n^2) (5,000 refs took 3 s).
  // Refs complete mostly in submission order: a prefix that only moves forward is O(n) over the
  // whole wait and alone decides "all of them"; refs done out of order are counted by a pass over
  // the rest at most once per kRescan. A pass that the throttle skipped may have been the one
  // to find the last ref needed, so a parked waiter asks again after kRecheck rather than at the
  // next completion, which may never come (the park's own 50 ms bound would then be the delay).
  // get of a list needs no pass and is never throttled.
  constexpr auto kRescan = std::chrono::microseconds(50);
  constexpr auto kRecheck = std::chrono::microseconds(1000);
  const size_t n = states.size();
  size_t prefix = 0, count = 0;
  auto last_pass = Clock::now() - kRescan;
  auto enough = [&] {
    for (; prefix < n && states[prefix]->done(); ++prefix) {
      if (!done[prefix]) {
        done[prefix] = true;
        ++count;
      }
    }
    if (count >= num_returns) return true;
    if (num_returns == n) return false;
    const auto now = Clock::now();
    if (now - last_pass < kRescan) return false;
    last_pass = now;
    for (size_t i = prefix; i < n && count < num_returns; ++i) {
      if (!done[i] && states[i]->done()) {
        done[i] = true;
        ++count;
      }
    }
    return count >= num_returns;
  };
  if (!enough()) {
    // get of a list, or wait: recorded when it waits
    timeline::Span span(num_returns == n ? timeline::Kind::kGet : timeline::Kind::kWait, 0, n);
    block_until(l, enough, deadline_of(timeout), nullptr,
                num_returns == n ? std::chrono::microseconds(0) : kRecheck);
  }
  for (size_t i = 0; i < states.size(); ++i) done[i] = states[i]->done();
  return done;
}

void throw_error(const ObjectState& s) {
  const ErrorInfo& e = s.error();
  switch (e.kind) {
    case ErrorKind::kTask: throw TaskError(e.type_name, e.message, e.function, e.rank);
    case ErrorKind::kActorDied: throw ActorDiedError(e.message);
    case ErrorKind::kObjectLost: throw ObjectLostError(e.message);
    case ErrorKind::kOwnerDied: throw OwnerDiedError(e.message);
    case ErrorKind::kInfeasible: throw InfeasibleError(e.message);
    case ErrorKind::kStoreFull: throw ObjectStoreFullError(e.message);
    default: throw Error(e.message.empty() ? "failed object " + s.id.str() : e.message);
  }
}

void throw_get_timeout(const ObjectId& id, std::chrono::nanoseconds timeout) {
  // The owner's loop knows which task or call produces it; asked briefly (a loop that does not
  // answer in time, or a ref owned elsewhere, leaves the message without the name).
  std::string producer;
  EventLoop* l = core::current_loop();
  if (l && id.owner == l->rank() && !l->stopped()) {
    auto answer = std::make_shared<std::promise<std::string>>();
    std::future<std::string> f = answer->get_future();
    l->run_or_post([answer, id](EventLoop& loop) { answer->set_value(loop.describe_producer(id)); });
    if (f.wait_for(std::chrono::milliseconds(200)) == std::future_status::ready) producer = f.get();
  }
  throw GetTimeoutError("get timed out after " + duration_text(timeout) + " waiting for " +
                        id.str() + (producer.empty() ? "" : ", the result of " + producer) +
                        " (owner rank " + std::to_string(id.owner) + ")");
}

namespace {
void validate(const SubmitOptions& o) {
  auto bad = [](const std::string& what) { throw Error("invalid option: " + what); };
  if (o.num_cpus < 0) bad("num_cpus must be ≥ 0");
  if (o.num_gpus < 0) bad("num_gpus must be ≥ 0");
  if (o.memory < 0) bad("memory must be ≥ 0");
  for (const auto& [k, v] : o.resources)
    if (v < 0 || k.empty()) bad("resource '" + k + "' must have a name and an amount ≥ 0");
  if (o.max_concurrency < 1) bad("max_concurrency must be ≥ 1");
  if (o.max_restarts < -1) bad("max_restarts must be ≥ 0, or -1 for without limit");
  if (o.max_task_retries < -1) bad("max_task_retries must be ≥ 0, or -1 for without limit");
  if (o.checkpoint_every < 0) bad("checkpoint_every must be ≥ 0 (0: off)");
  if (o.checkpoint_interval_ms < 0) bad("checkpoint_interval must be ≥ 0 (0: off)");
  if ((o.checkpoint_every != 0 || o.checkpoint_interval_ms != 0) && o.max_concurrency != 1)
    bad("checkpoints need max_concurrency = 1 (a checkpoint is the state between two calls)");
  if (o.strategy == 2 && o.affinity_node < 0)
    bad("NodeAffinity needs .node, a node id ≥ 0 (weft::node() on the ranks of that node)");
}

StatePtr reply_slot(EventLoop& l) {
  return core::new_state(ObjectId{l.rank(), 1, l.next_object_seq()});
}

void post_submit(EventLoop& l, std::unique_ptr<core::PendingCall> call) {
  l.submit_or_post([call = std::move(call)](EventLoop& loop) mutable { loop.submit(std::move(call)); });
}
}  // namespace

const SubmitOptions& default_submit_options() {
  static const SubmitOptions defaults = to_submit_options(TaskOptions{});
  return defaults;
}

StatePtr submit_task(uint64_t function_id, EncodedArgs args, const SubmitOptions& opts) {
  // The defaults are valid by construction and their demand is the same every time.
  const bool defaults = &opts == &default_submit_options();
  if (!defaults) validate(opts);
  EventLoop& l = loop();
  auto call = std::make_unique<core::PendingCall>();
  call->kind = core::PendingCall::Kind::kTask;
  call->result = new_owned_state();
  call->fn_id = function_id;
  call->args = args.bytes.take();
  call->refs = std::move(args.refs);
  call->contained = std::move(args.contained);
  call->need = defaults ? l.default_task_need() : core::to_need(opts);
  call->strategy = core::to_strategy(opts);
  call->name = opts.name;
  call->max_retries = opts.max_retries;
  call->retry_exceptions = opts.retry_exceptions;
  core::set_placement(*call, opts);
  core::ExecContext* parent = core::current_exec();
  call->depth = parent ? parent->depth + 1 : 0;
  StatePtr s = call->result;
  post_submit(l, std::move(call));
  return s;
}

ActorRef create_actor(uint64_t class_id, EncodedArgs args, const SubmitOptions& opts) {
  validate(opts);
  EventLoop& l = loop();
  auto call = std::make_unique<core::PendingCall>();
  call->kind = core::PendingCall::Kind::kActorCreate;
  call->result = reply_slot(l);
  call->fn_id = class_id;
  call->args = args.bytes.take();
  call->refs = std::move(args.refs);
  call->contained = std::move(args.contained);
  call->need = core::to_need(opts);
  call->strategy = core::to_strategy(opts);
  core::set_placement(*call, opts);
  call->actor = ActorRef{ActorId{l.rank(), 0, l.next_actor_seq()}, -1, class_id,
                         opts.max_restarts, opts.max_task_retries};
  call->create_opts = std::make_shared<const SubmitOptions>(opts);
  ActorRef handle = call->actor;
  // The handle leaves now, without a rank: placement, the name and the constructor follow on the
  // loop, and their errors reach every call and ActorHandle::ready() (core/unplaced_actors.cpp).
  core::submit_actor_creation(l, std::move(call));
  return handle;
}

int actor_rank_known(const ActorRef& actor) {
  return actor.rank >= 0 ? actor.rank : loop().placed_rank(actor.id);
}

int actor_rank(const ActorRef& actor) {
  EventLoop& l = loop();  // the loop knows whether the handle's rank failed and what replaced it
  StatePtr reply = reply_slot(l);
  l.post([actor, reply](EventLoop& loop) { loop.await_actor_rank(actor, reply); });
  wait_done(reply, std::chrono::nanoseconds(-1));
  if (reply->status() == ObjectStatus::kFailed) throw_error(*reply);
  int32_t rank = -1;
  std::memcpy(&rank, reply->payload->data(), sizeof rank);
  return rank;
}

StatePtr submit_actor_call(const ActorRef& actor, uint64_t method_id, EncodedArgs args) {
  EventLoop& l = loop();
  auto call = std::make_unique<core::PendingCall>();
  call->kind = core::PendingCall::Kind::kActorCall;
  call->result = new_owned_state();
  call->fn_id = method_id;
  call->args = args.bytes.take();
  call->refs = std::move(args.refs);
  call->contained = std::move(args.contained);
  call->actor = actor;
  StatePtr s = call->result;
  post_submit(l, std::move(call));
  return s;
}

void kill_actor(const ActorRef& actor) {
  loop().post([actor](EventLoop& l) { l.kill_actor(actor); });
}

std::optional<ActorRef> lookup_named_actor(const std::string& name) {
  EventLoop& l = loop();
  StatePtr reply = reply_slot(l);
  l.post([name, reply](EventLoop& loop) { loop.request_named(name, {}, reply, false); });
  wait_done(reply, std::chrono::nanoseconds(-1));
  if (reply->status() == ObjectStatus::kFailed) throw_error(*reply);
  if (reply->payload->data()[0] == 0) return std::nullopt;
  ActorRef r;
  std::memcpy(&r, reply->payload->data() + 1, sizeof r);
  return r;
}

}  // namespace weft::detail
