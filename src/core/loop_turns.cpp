// Who runs the event loop's turns, and where a task body runs. The loop's state has one owner at
// a time: the thread holding the token. That is the loop thread, unless a thread that would
// otherwise hand work to it and wait runs the turn itself:
//  - a thread blocked in get() drives turns while it waits (api.cpp, block_until), so its
//    request leaves and its reply is read on that thread;
//  - a caller's .remote() runs its submission itself (submit_or_post): the request goes from the
//    caller's thread into the target's ring, with no hand-off to the loop thread (a PendingCall
//    and its command made on one core and freed on another, and the loop thread spinning or
//    woken to take them: async tasks ran at about two thirds of the rate). The submission's own
//    turn only sends; reading the rings is left to the loop thread. The newest
//    body a submission admits on this rank waits for the next turn of another kind
//    (deferred_job_), so that a get() for its result still runs it on the caller and the loop
//    thread a short one; an older one goes to the pool when the next is admitted;
//  - a pool thread that finished a task sends the result itself (run_or_post).
// A task admitted during a turn on the loop thread runs on the loop thread right after that turn
// (no hand-off to a pool thread), while a pool thread keeps the loop turning ("relief") until it
// returns. A body whose function ran short lately (body_durations.hpp) runs there without relief:
// waking a pool thread would cost more than the body; if it runs long this time, the next
// heartbeat (every failure_timeout_ms / 5) starts the relief. Without heartbeats (one rank, or
// failure_timeout_ms = 0) every body on the loop thread is relieved. A task admitted during a
// turn that a get() drives runs inline when it is the very result that get() waits for, or, for
// a get() or wait() without a deadline, when its function ran short lately: the waiting thread
// has nothing else to do, and a pool thread would cost a wake and a core that the waiter,
// spinning beside it, also wants (a stencil of 2 dependent tasks a step on 2 ranks: 62-63 µs a
// step, 18-46 µs with this). It does so only at its outermost get(), so a body that itself
// waits cannot pile bodies on one stack; a waiter with a deadline does not, so that a body
// running long after all cannot make it overshoot.
// Everything else goes to the pool. Hand-offs per remote task: the caller's thread writes the
// target's ring, and the target's thread that read it runs the task and writes the reply into the
// caller's ring, which the caller's thread (or, for async work, the loop thread) reads.
#include <immintrin.h>

#include <thread>

#include "core/event_loop.hpp"
#include "core/exec_context.hpp"
#include "core/idle_backoff.hpp"
#include "core/state_gather.hpp"
#include "weft/detail/refcount_api.hpp"

namespace weft::core {
namespace {

// What a turn on a borrowed thread must not see of the thread's own work: the task it runs
// (current_exec) and the ref collector of its result. The loop thread has neither.
class TurnScope {
 public:
  TurnScope() : exec_(current_exec()), collect_(nullptr) { current_exec() = nullptr; }
  ~TurnScope() { current_exec() = exec_; }

 private:
  ExecContext* exec_;
  detail::RefCollector collect_;
};

thread_local bool t_in_turn = false;
// This thread's turn is a caller's submission (submit_or_post): bodies it admits are deferred.
thread_local bool t_submitting = false;

// Where a task admitted during this thread's turn may run instead of the pool.
struct InlineSlot {
  bool any = false;     // the loop thread: any task
  ObjectId awaited{};   // a thread in get(): the task producing this object...
  bool short_ok = false;  // ...and, at its outermost get(), any body known to be short
  bool relieve = true;  // the loop thread: a pool thread turns the loop while it runs
  Job job;
};
// A body whose recent runs all took less than this runs on the loop thread with no pool thread
// woken to relieve it: the wake costs more than such a body (a futex wake is tens of µs here),
// and the loop's messages wait at most about this long.
constexpr uint64_t kShortBodyNs = 50'000;
thread_local InlineSlot* t_slot = nullptr;
// Bodies this thread runs inline from turns it drives while blocked in get(), nested.
thread_local int t_waiter_inline_depth = 0;

class SlotScope {
 public:
  explicit SlotScope(InlineSlot* s) : prev_(t_slot) { t_slot = s; }
  ~SlotScope() { t_slot = prev_; }

 private:
  InlineSlot* prev_;
};

}  // namespace

bool EventLoop::try_token() {
  if (t_in_turn || closed_.load(std::memory_order_acquire)) return false;
  if (token_.load(std::memory_order_relaxed) || token_.exchange(true, std::memory_order_acquire))
    return false;
  if (closed_.load(std::memory_order_acquire)) {  // closed while we took it
    release_token();
    return false;
  }
  return true;
}

size_t EventLoop::turn(std::chrono::steady_clock::time_point now) {
  TurnScope scope;
  t_in_turn = true;
  size_t n = deferred_job_ ? start_deferred_job() : 0;
  n += drain_commands();
  n += transport_.poll(*this);
  n += flush_refcount();  // borrow adds and releases of this turn, batched per owner
  n += steal_tick(now);   // backlog reports and steal requests (work_stealing.cpp)
  if (puller_ && puller_->room_due(now)) n += pull_room_tick();  // object_transfer.cpp
  if (warnings_.has_repeats()) log_repeated_warnings(now, /*final=*/false);
  if (gather_ && gather_->active()) gather_->expire(now);  // ranks that did not answer in time
  if (!lost_call_results_.empty()) expire_lost_call_results(now);  // actor_restarts.cpp
  t_in_turn = false;
  return n;
}

bool EventLoop::drive_turn(const ObjectId* awaited, bool* did_work, bool run_short) {
  InlineSlot slot;
  if (awaited) slot.awaited = *awaited;
  slot.short_ok = run_short && t_waiter_inline_depth == 0;
  size_t n;
  {
    SlotScope in(&slot);
    if (!try_token()) return false;
    n = turn(std::chrono::steady_clock::now());
    release_token();
  }
  if (did_work) *did_work = n > 0;
  if (slot.job) {   // the awaited result or a short body, computed here
    end_driving();  // the loop thread turns the loop meanwhile
    ++t_waiter_inline_depth;
    slot.job();
    --t_waiter_inline_depth;
    begin_driving();
    if (did_work) *did_work = true;
  }
  return true;
}

void EventLoop::run_or_post(Command c) { run_here_or_post(std::move(c), /*submitting=*/false); }
void EventLoop::submit_or_post(Command c) { run_here_or_post(std::move(c), /*submitting=*/true); }

void EventLoop::run_here_or_post(Command c, bool submitting) {
  if (!try_token()) return post(std::move(c));
  t_submitting = submitting;
  {
    TurnScope scope;
    t_in_turn = true;
    // Everything this thread posted before runs first, however much (drain_commands stops at a
    // batch): a caller's actor calls take their order positions in submit(), so none may
    // overtake an earlier one still queued.
    while (drain_commands() == kCommandBatch) {
    }
    c(*this);
    if (submitting) {
      // What it sent leaves now; what has arrived is left to the loop thread.
      flush_refcount();
      transport_.flush();
    }
    t_in_turn = false;
  }
  if (!submitting) turn(std::chrono::steady_clock::now());  // and what it sent leaves now
  t_submitting = false;
  const bool deferred = deferred_job_.has_value();
  release_token();
  if (deferred) transport_.wake();  // a parked loop thread starts them
}

size_t EventLoop::start_deferred_job() {
  DeferredJob d = std::move(*deferred_job_);
  deferred_job_.reset();
  run_task_job(std::move(d.job), d.ret, d.fn_id);
  return 1;
}

void EventLoop::run_task_job(Job job, const ObjectId& ret, uint64_t fn_id) {
  if (t_submitting) {  // a caller's submission: see submit_or_post
    // Only the newest waits (the one a get() may be about to ask for); an older one goes to the
    // pool from here, so a same-rank burst does not wait for the loop thread to start it.
    if (deferred_job_) pool_.submit(std::move(deferred_job_->job));
    deferred_job_.emplace(DeferredJob{std::move(job), ret, fn_id});
    return;
  }
  InlineSlot* s = t_slot;
  if (s && !s->job && inline_tasks_) {
    if (s->any) {
      // The loop thread: a body known to be short runs here unrelieved, when the heartbeat
      // thread is there to relieve it should it run long; another one only while a pool thread
      // is free to relieve it.
      const bool is_short = beats_watch_inline_.load(std::memory_order_relaxed) &&
                            body_durations_.estimate_ns(fn_id) < kShortBodyNs;
      if (is_short || pool_.has_idle_thread()) {
        s->relieve = !is_short;
        s->job = std::move(job);
        return;
      }
    } else if ((s->awaited == ret && ret != ObjectId{}) ||
               (s->short_ok && body_durations_.estimate_ns(fn_id) < kShortBodyNs)) {
      s->job = std::move(job);
      return;
    }
  }
  pool_.submit(std::move(job));
}

size_t EventLoop::loop_turn(std::chrono::steady_clock::time_point now) {
  InlineSlot slot;
  slot.any = true;
  size_t n;
  {
    SlotScope in(&slot);
    n = turn(now);
  }
  if (!slot.job) return n;
  // A task to run here. The token goes back first, and a pool thread keeps the loop turning
  // until this thread returns (a long body must not stop the rank's messages).
  release_token();
  const uint64_t gen = relief_gen_.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (slot.relieve) {
    // Apart from the job queue: a relief run by a thread that helps while blocked in get()
    // would hold that thread until this task ends, which may wait for that very thread's task.
    pool_.submit_apart([this, gen] { relieve(gen); });
  } else {
    unrelieved_gen_.store(gen, std::memory_order_release);  // short so far: see kShortBodyNs
  }
  slot.job();
  unrelieved_gen_.store(0, std::memory_order_release);
  relief_done_.store(gen, std::memory_order_release);
  transport_.wake();  // a relief parked in the transport leaves
  while (!try_token()) {
    if (closed_.load(std::memory_order_acquire)) return n + 1;
    std::this_thread::yield();
  }
  return n + 1;
}

void EventLoop::relieve_long_inline_body() {
  // A body that was short before and is not this time: from this beat on a pool thread turns the
  // loop, as for a body not known to be short. Until this beat, turns came only from threads that
  // took the token on their own (a get(), a pool thread ending a task, this heartbeat's turn).
  const uint64_t gen = unrelieved_gen_.exchange(0, std::memory_order_acq_rel);
  if (gen != 0) pool_.submit_apart([this, gen] { relieve(gen); });
}

void EventLoop::relieve(uint64_t gen) {
  auto done = [&] { return relief_done_.load(std::memory_order_acquire) >= gen; };
  auto last_work = std::chrono::steady_clock::now();
  IdleBackoff& backoff = IdleBackoff::this_thread(spin_for_, yield_for_);
  while (!done() && !closed_.load(std::memory_order_acquire)) {
    if (drivers_.load(std::memory_order_acquire) > 0) {  // a get() turns it: step aside
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      continue;
    }
    if (!try_token()) {
      std::this_thread::yield();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (turn(now) > 0) last_work = now;
    const auto step = backoff.step(now - last_work);
    if (step == IdleBackoff::Step::kPark && !done())
      transport_.wait(std::chrono::microseconds(500));  // parked with the token, as the loop
    release_token();
    if (step == IdleBackoff::Step::kSpin)
      for (int i = 0; i < 16; ++i) _mm_pause();
    else
      backoff.yield();
  }
}

}  // namespace weft::core
