// The rank's event loop: the rank's control state — the submitter's pending calls and
// scheduling view, the executor's resource gate, the actors hosted here, the head's directory
// on rank 0 — and the transport, owned by one thread at a time: the one holding the loop's
// token, usually the loop thread, or a thread blocked in get() that runs the turns itself
// (loop_turns.cpp). Other threads hand it work through a lock-free command queue and wake it;
// it polls the network with adaptive back-off so an idle rank costs almost nothing.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/config.hpp"
#include "core/borrow_protocol.hpp"
#include "core/actor_checkpoints.hpp"
#include "core/actor_placer.hpp"
#include "common/function_queue.hpp"
#include "common/recycling_allocator.hpp"
#include "core/call_orderer.hpp"
#include "core/dependency_waiter.hpp"
#include "core/exec_context.hpp"
#include "core/message_scratch.hpp"
#include "core/body_durations.hpp"
#include "core/exec_gate.hpp"
#include "core/exec_item.hpp"
#include "core/failed_ranks.hpp"
#include "core/heartbeat_thread.hpp"
#include "core/invoke.hpp"
#include "core/loop_command.hpp"
#include "core/msg_outbox.hpp"
#include "core/object_puller.hpp"
#include "core/object_table.hpp"
#include "core/object_transfer.hpp"
#include "core/ops_counters.hpp"
#include "core/pg_state.hpp"
#include "core/repeated_warnings.hpp"
#include "core/steal_planner.hpp"
#include "core/task_placer.hpp"
#include "core/unplaced_actor.hpp"
#include "core/wire.hpp"
#include "core/worker_pool.hpp"
#include "head/actor_directory.hpp"
#include "head/failure_detector.hpp"
#include "net/topology.hpp"
#include "net/transport.hpp"
#include "sched/cluster_view.hpp"
#include "sched/policy.hpp"
#include "sched/resource_set.hpp"
#include "weft/detail/runtime_api.hpp"

namespace weft::core {

class StateGather;

class EventLoop;
class StorePayload;

Strategy to_strategy(const detail::SubmitOptions& o);
// The resources a task or actor with these options holds: custom ones, CPU, GPU and memory.
sched::ResourceSet to_need(const detail::SubmitOptions& o);

// A task, actor creation or actor call that its submitter holds until its ref arguments exist.
// Made by the caller's thread and freed by the loop: HandoffAllocated (handoff_pool.hpp).
struct PendingCall : HandoffAllocated {
  enum class Kind : uint8_t { kTask, kActorCall, kActorCreate };
  // The fields are ordered to leave no padding: at 320 bytes or less a call takes the 320-byte
  // block class (handoff_pool.hpp), one per call the loop has not dispatched yet.
  StatePtr result;                 // task/call result, or the creation's reply slot
  uint64_t fn_id = 0;              // function, method or class id
  std::vector<char> args;          // tagged argument block (see detail::EncodedArgs)
  std::vector<StatePtr> refs;
  std::vector<StatePtr> contained;  // refs serialized inside `args`: the callee borrows them
  sched::ResourceSet need;
  detail::ActorRef actor;          // calls and creations
  uint64_t seq = 0;                // calls: position in this caller's order
  // Creations only: name, concurrency, restarts, checkpoints. Shared and immutable, so that the
  // creator's copy for restarts (keep_life) shares it; held inline, the options (about 150 bytes)
  // put every task's call in the 512-byte block class.
  std::shared_ptr<const detail::SubmitOptions> create_opts;
  PgContext placement;             // placement group and bundle asked for (pg 0: none)
  std::string name;                // tasks: TaskOptions::name, for errors and logs
  Strategy strategy;
  int pg_target = -1;              // the bundle's rank, once the group is known (pg_client.cpp)
  uint32_t depth = 0;              // tasks: nesting depth (see ExecItem::depth)
  int max_retries = 0;             // tasks: TaskOptions::max_retries (-1: without limit)
  int call_retries = -2;           // calls: re-sends left (max_task_retries); -2: not kept yet
  Kind kind = Kind::kTask;
  bool retry_exceptions = false;  // tasks: TaskOptions::retry_exceptions
};
static_assert(sizeof(PendingCall) <= 320, "a PendingCall outgrew the 320-byte block class");

// What an actor's creator keeps to restart it (actor_restarts.cpp): the creation as placed, with
// its resolved constructor arguments and the refs they hold.
struct ActorLife {
  std::unique_ptr<PendingCall> spec;
  int rank = -1;              // the current incarnation's rank
  uint32_t incarnation = 0;   // 0: the first; +1 per restart
  int restarts = 0;           // restarts made
  std::vector<int> ranks;     // every incarnation's rank, in order
  bool dead = false;          // no further restart (killed, or max_restarts used up)
  bool checkpointed = false;  // its host wrote a checkpoint: a restart must find one
  std::string history() const;  // "2 restarts, on ranks 1, 2, 3"
};

// Where a caller's calls to one actor go and how they are numbered (actor_restarts.cpp): its
// positions run on across restarts; those below `base` were sent to an earlier incarnation and
// go unordered (in the order sent), the rest in order. The caller sends its positions in order
// (a call ready before an earlier one, which waits for its arguments, waits behind it here), so
// what it has sent is always a prefix, and what it has not sent reaches a new incarnation in
// order even across a restart.
struct CallerSeq {
  uint64_t next = 0;      // the next position to hand out
  int rank = -1;          // the rank the latest call went to
  uint64_t base = 0;      // first ordered position at `rank`
  uint64_t sent_end = 0;  // one past the highest position sent (call or skip) to any incarnation
  uint64_t ready_next = 0;  // the next position to leave the caller (dispatched or failed)
  std::map<uint64_t, std::unique_ptr<PendingCall>> early;  // ready before an earlier position
};

// What a task's owner keeps while the task may still be retried (task_retry.cpp). Made and freed
// by the loop; from recycled blocks (HandoffAllocated), one per task sent to another rank.
struct RetrySpec : HandoffAllocated {
  ExecItem item;            // as sent: the arguments and the refs they hold
  int left = 0;             // retries left; -1: without limit
  bool exceptions = false;  // retry_exceptions
  int rank = -1;            // where the current attempt runs
  std::vector<int> earlier; // where the earlier ones ran (empty until a retry: no allocation)
  size_t attempts() const { return earlier.size() + 1; }
  std::string attempts_text() const;  // "3 attempts, on ranks 1, 2, 1"
};

// A task this rank submitted, until its result arrives: where it runs, whether the submitter's
// slot view counts it, and its spec while it may be retried.
struct InFlight {
  int rank;
  bool reserved;
  sched::ResourceSet need;
  // Null when the task cannot be retried, as for every task run on this rank (keep_for_retry):
  // held inline, the spec's ExecItem made each in-flight entry about 330 bytes larger.
  std::unique_ptr<RetrySpec> retry;
  uint64_t fn_id = 0;  // what it runs, and TaskOptions::name: for errors (describe_producer)
  std::string name;
};

struct ActorCallItem {
  int caller = -1;
  uint64_t seq = 0;
  uint64_t method = 0;
  ObjectId ret;
  bool skip = false;               // the caller failed it already (an argument failed)
  bool unordered = false;          // re-sent after a restart, before the caller's resume base
  bool resume = false;             // not a call: this caller's ordered positions start at seq
  std::vector<char> args;
  ArgPins pins;                    // its kStored arguments, pinned (stored_args.cpp)
  std::vector<StatePtr> holds;     // refs inside `args`, alive until the call ends
};

struct ActorInstance {
  enum class State : uint8_t { kCreating, kAlive, kDead };
  ActorId id;
  uint64_t class_id = 0;
  State state = State::kCreating;
  std::shared_ptr<void> object;
  int max_concurrency = 1;
  int running = 0;
  std::string name;
  std::string death;               // why it died
  sched::ResourceSet held;
  CallOrderer<ActorCallItem> order;  // each caller's calls in its submission order
  std::deque<ActorCallItem> ready;
  PgContext placement;             // group, bundle and GPUs it holds
  sched::GpuGrant grant;
  uint32_t incarnation = 0;        // > 0: a restart (actor_restarts.cpp)
  CheckpointPolicy policy;         // ActorOptions::checkpoint_every / checkpoint_interval
  bool expect_checkpoint = false;  // a restart of an actor whose host had written one
  std::shared_ptr<ActorCheckpointer> ckpt;  // null: this actor's state is never written
};

class EventLoop : public net::MessageSink {
 public:
  EventLoop(const Config& cfg, const net::Topology& topo, net::Transport& transport,
            std::vector<sched::RankInfo> ranks, int pool_threads);
  ~EventLoop() override;

  void start();
  // Rank 0: tells every rank to stop with `exit_code`, then stops this loop. Blocking.
  void shutdown_job(int exit_code);
  // Blocks until the loop has stopped (a shutdown message, or shutdown_job).
  int wait_stopped();
  // Ranks this one knows have failed (its transport reported them, or the head's kShutdown
  // named them); read after wait_stopped(). With one, the job cannot end collectively.
  std::vector<int> failed_ranks() const;
  // Heartbeats (heartbeats.cpp): starts this rank's heartbeat thread and its detector (the head
  // watches every other rank, the others watch the head), unless failure_timeout_ms is 0. Called
  // once every rank's loop runs (after the start-up barrier), so no rank is timed from before.
  void start_heartbeats();
  // The loop stopped because this rank cannot go on: the head declared it dead (it is fenced),
  // or the head is gone. The reason was logged once; the rank ends without collectives.
  bool ended_by_failure() const { return ended_by_failure_.load(std::memory_order_acquire); }
  // This rank was declared dead by the head and fenced (ended_by_failure() is true too).
  bool fenced() const { return fenced_.load(std::memory_order_acquire); }

  // Any thread: queue a command for the loop thread.
  void post(Command c);

  // Loop turns run on whichever thread holds the loop's token: the loop thread, or a thread
  // that would otherwise hand work to it and wait (docs/architecture.md, "Inside one rank").
  // A thread blocked in get() drives turns itself between begin_driving() and end_driving()
  // (the loop thread steps aside meanwhile), so the request leaves and its reply is read with no
  // thread hand-off; a pool thread that finished a task runs its completion the same way.
  void begin_driving() { drivers_.fetch_add(1, std::memory_order_acq_rel); }
  void end_driving() { drivers_.fetch_sub(1, std::memory_order_acq_rel); }
  // One turn on this thread if the token is free; false if another thread holds it (or the
  // loop has closed). `did_work`: the turn found something to do. When the turn starts the
  // task producing `awaited` (the object this thread waits for), it runs here, after the turn.
  // `run_short`: the waiter has no deadline, so it may also run bodies known to be short
  // (loop_turns.cpp); a waiter with one must not overshoot it by a body that runs long after all.
  bool drive_turn(const ObjectId* awaited = nullptr, bool* did_work = nullptr,
                  bool run_short = false);
  // The idle back-off every driver of turns follows (loop_spin_us, loop_yield_us).
  std::chrono::microseconds spin_for() const { return spin_for_; }
  std::chrono::microseconds yield_for() const { return yield_for_; }
  // Runs `c` now on this thread (after the commands queued before it) when the token is free,
  // else posts it.
  void run_or_post(Command c);
  // A caller's submission: as run_or_post, so the request leaves from the caller's thread with no
  // hand-off to the loop thread, but its turn only sends (it reads nothing). The newest body it
  // admits on this rank is not started from this turn: it waits for the next turn of another
  // kind, where it may run inline (a get() for its very result runs it on the caller, the loop
  // thread runs a short one) or go to the pool; an older one goes to the pool then.
  void submit_or_post(Command c);

  // Any thread.
  int rank() const { return rank_; }
  int size() const { return size_; }
  ObjectTable& objects() { return objects_; }
  const BorrowProtocol& borrows() const { return borrow_; }
  // A borrowed state died holding `credits`: give them back to the owner (refcount.cpp).
  void queue_release(const ObjectId& id, uint32_t credits);
  Completions& completions() { return completions_; }
  WorkerPool& pool() { return pool_; }
  const net::Topology& topology() const { return topo_; }
  bool stopped() const { return stopped_.load(std::memory_order_acquire); }
  uint64_t next_object_seq() { return object_seq_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t next_actor_seq() { return actor_seq_.fetch_add(1, std::memory_order_relaxed); }
  // to_need of detail::default_submit_options(), made once.
  const sched::ResourceSet& default_task_need() const { return default_task_need_; }
  // Rank r's total resources: fixed at start-up, so any thread may read them.
  const sched::ResourceSet& rank_total(int r) const { return view_.info(r).total; }

  // MessageSink (loop thread).
  void on_message(int src, uint16_t type, const char* data, size_t len) override;
  void on_peer_failed(int rank, const std::string& reason) override;

  // --- loop-thread operations used by commands (submitter side) ---
  void submit(std::unique_ptr<PendingCall> call);
  // "task add 'probe' on rank 2": what this rank is running to produce `id` (its task, or its
  // call to an actor), or "" when it is not producing it now (submitter.cpp).
  std::string describe_producer(const ObjectId& id) const;
  // This rank's part of what `weft status`, `list`, `metrics` and `timeline` show
  // (job_state_snapshot.cpp). Without kWantObjects the per-object list is left out (its count
  // stays in the metrics): the "metrics" command, scraped often.
  // `want`: kWantObjects, kWantTimeline (state_gather.hpp).
  nlohmann::json job_snapshot(uint8_t want = 1);
  // Rank 0: asks every live rank for its part and calls `done` with the merged view of the job
  // once all answered, or when the gather's deadline (1 s) passed (state_queries.cpp).
  void gather_state(uint8_t want, std::function<void(nlohmann::json)> done);
  // The repeats RepeatedWarnings counted, one line per text (submitter.cpp): every 10 s at most,
  // and once more when the loop ends.
  void log_repeated_warnings(std::chrono::steady_clock::time_point now, bool final);
  void fetch(const StatePtr& s);
  void request_named(const std::string& name, detail::ActorRef ref, StatePtr reply, bool reg);
  void kill_actor(const detail::ActorRef& a);
  // Executor side.
  void release_cpu(double cpus);
  void acquire_cpu(double cpus);

 private:
  void run();
  // One pass: commands, the transport, this turn's refcount batches, work stealing. Token held.
  size_t turn(std::chrono::steady_clock::time_point now);
  // The loop thread's turn; a task it admitted runs on this thread after it (loop_turns.cpp).
  size_t loop_turn(std::chrono::steady_clock::time_point now);
  void relieve(uint64_t gen);  // a pool thread turns the loop while the loop thread runs a task
  // A task's body: on this thread after the turn when allowed (loop_turns.cpp), else the pool.
  // `fn_id`: its function or method, whose recent durations say whether it is short.
  void run_task_job(Job job, const ObjectId& ret, uint64_t fn_id);
  void run_here_or_post(Command c, bool submitting);  // run_or_post, submit_or_post
  // The newest body admitted during a caller's submission (submit_or_post), started by the next
  // turn that is not one: token held.
  struct DeferredJob {
    Job job;
    ObjectId ret;
    uint64_t fn_id;
  };
  std::optional<DeferredJob> deferred_job_;
  size_t start_deferred_job();
  // A body of `fn_id` that started at `t0` has ended (its result encoded): into body_durations_.
  void note_body(uint64_t fn_id, std::chrono::steady_clock::time_point t0) {
    const auto took = std::chrono::steady_clock::now() - t0;
    body_durations_.record(
        fn_id,
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()));
  }
  // The heartbeat thread's check: a body the loop thread runs without relief that is still
  // running (it was short before) gets a pool thread to keep the loop turning (loop_turns.cpp).
  void relieve_long_inline_body();
  bool try_token();
  void release_token() { token_.store(false, std::memory_order_release); }
  // Runs queued commands, at most kCommandBatch (a turn also reads the network); their number.
  static constexpr size_t kCommandBatch = 4096;
  size_t drain_commands();
  void send(int dest, Msg type, const serde::Buffer& b);
  void send_all(MsgOutbox& out);  // what a protocol class returned, in order; clears `out`

  // submitter.cpp
  void on_ready_call(std::unique_ptr<PendingCall> call);
  void start_ready_call(std::unique_ptr<PendingCall> call);  // on_ready_call past the order gate
  void dispatch_task(std::unique_ptr<PendingCall> call);
  std::vector<std::pair<int, uint64_t>> arg_bytes_by_rank(const PendingCall& call) const;
  void handle_task_moved(int src, const char* data, size_t len);
  // task_retry.cpp: the spec kept for retries; sending it again to a live rank (false: no
  // retry left, or no live rank can run it); the end of the final error.
  RetrySpec* keep_for_retry(const PendingCall& call, InFlight& flight, int target);
  bool retry_task(InFlight& f, const ObjectId& id, const detail::ErrorInfo& why, int avoid = -1);
  std::string retry_note(const InFlight& f, bool system_failure) const;
  // The owner's copy of a stored result from `holder` failed with ObjectLost (the holder or the
  // network failed, perhaps before the failure is declared): the value is lost with the attempt
  // that made it, so the task runs again as if `holder` had failed. False: not retried (`e` then
  // ends with the retry note).
  bool retry_lost_result(int holder, const ObjectId& id, detail::ErrorInfo& e);
  // actor_restarts.cpp: the same for an actor call that may be re-sent (max_task_retries), whose
  // actor may still live: the failure is held until `holder` is declared failed (the call then
  // goes to the restart) or a while has passed without that (the failure is the result then).
  bool hold_lost_call_result(int holder, const ObjectId& id, const detail::ErrorInfo& e);
  void expire_lost_call_results(std::chrono::steady_clock::time_point now);
  // kSubmitTask to `dest` (submit_wire.hpp), once the owners of `holds` (the refs inside the
  // item's arguments) counted it.
  void send_submit(int dest, const ExecItem& item, std::vector<StatePtr> holds);
  void dispatch_actor_create(std::unique_ptr<PendingCall> call);
  void dispatch_actor_call(std::unique_ptr<PendingCall> call);
  void fail_call(PendingCall& call, const detail::ErrorInfo& e);
  // A call message flagged "skip": the actor passes this position of the caller's order.
  void send_skip(int host, const ActorId& actor, const PendingCall& call);
  void on_object_done(const StatePtr& s);
  // `stored`: the value already lies in the node store (object_transfer.cpp); data is unused.
  // `contained`: the refs inside the value, kept with it (refcount.cpp). `movable`: a vector
  // holding `data`, which the result's payload may take instead of copying it.
  void on_result(int src, const ObjectId& id, bool ok, const char* data, size_t len,
                 detail::ErrorInfo err, std::shared_ptr<const detail::Payload> stored = nullptr,
                 std::vector<StatePtr> contained = {}, std::vector<char>* movable = nullptr);
  void handle_task_result(int src, const char* data, size_t len);
  void handle_get_object(int src, const char* data, size_t len);
  void handle_object_value(int src, const char* data, size_t len);
  void reply_object(int dest, const ObjectState& s);
  // The block to send: ref entries become their values, or with `stored_by_location` (tasks)
  // the locations of values in a node store (stored_args.cpp). A block without refs is the
  // call's own, moved out: the call must not be sent or resolved again.
  std::vector<char> resolve_args(PendingCall& call, bool stored_by_location);
  // The refs the call's receiver `dest` borrows (those nested in its arguments and in the values
  // of its resolved ref arguments, once each); its stored arguments' copies on dest's node are
  // noted to die with their values (stored_args.cpp).
  std::vector<StatePtr> refs_sent_with(PendingCall& call, int dest);
  static void note_stored_readers(const std::vector<StatePtr>& refs, int reader);

  // executor.cpp
  void enqueue_exec(ExecItemPtr item);  // its stored arguments pinned first, then queue_exec
  void queue_exec(ExecItemPtr item);  // into the gate, and whatever may start now starts
  void start_ready_exec();
  void start_exec(ExecItemPtr item);
  // stored >= 0: the value is a primary of that size in this node's store (store_result).
  void finish_task(const ExecItem& item, bool ok, std::vector<char> value,
                   const detail::ErrorInfo& err, int64_t stored = -1,
                   std::vector<StatePtr> contained = {});
  // `contained`: the refs serialized inside `value` (its receiver borrows them). An owner on
  // this rank takes `value` as its payload, without a copy.
  void send_result(int owner, const ObjectId& ret, bool ok, std::vector<char> value,
                   const detail::ErrorInfo& err, std::vector<StatePtr> contained = {});
  void handle_submit_task(int src, const char* data, size_t len);

  // work stealing between gates (work_stealing.cpp; the protocol: steal_planner.hpp)
  size_t steal_tick(std::chrono::steady_clock::time_point now);
  bool stealable_by(const ExecItem& item, int thief) const;
  void handle_backlog(int src, const char* data, size_t len);
  void handle_steal_request(int src, const char* data, size_t len);
  void handle_steal_reply(int src, const char* data, size_t len);

  // actor_host.cpp
  void handle_create_actor(int src, const char* data, size_t len);
  void handle_actor_call(int src, const char* data, size_t len);
  void route_call(const ActorId& id, ActorCallItem call);  // to its actor, or held as an orphan
  void handle_kill_actor(const char* data, size_t len);
  void actor_created(const ActorId& id, std::shared_ptr<void> obj, detail::ErrorInfo err);
  void accept_call(ActorInstance& a, ActorCallItem call);
  void pump_actor(ActorInstance& a);
  void fail_actor_call(const ActorInstance& a, const ActorCallItem& c);
  void kill_local_actor(ActorInstance& a, const std::string& why);
  // actor_checkpoints (host side): the checkpointer a class and its options ask for, and the
  // folder checkpoints go to (setting actor_checkpoint_dir).
  std::shared_ptr<ActorCheckpointer> make_checkpointer(const ActorInstance& a, bool restartable);
  const std::filesystem::path& actor_checkpoint_dir();
  void reply_completed_before(const ActorInstance& a, const ActorCallItem& c);
  // actor_state_method / actor_load_state_method on `object` (whole-job checkpoints).
  detail::ErrorInfo run_state_call(uint64_t class_id, int max_concurrency, const ActorCallItem& c,
                                   void* object, serde::Buffer& out);

  // actor_restarts.cpp (creator side): keep the creation, restart on a live rank, or give up.
  void send_creation(const PendingCall& call, uint32_t incarnation, std::vector<StatePtr> refs,
                     bool expect_checkpoint = false);
  void handle_actor_checkpointed(const char* data, size_t len);
  void actor_checkpointed(const ActorId& id);  // host side, once per actor after its first write
  void keep_life(const PendingCall& call);
  void restart_actors_on(int rank, const std::string& reason);
  // Caller side: a call to an actor whose rank failed waits for its restart (false: it cannot,
  // the call was failed); calls in flight there are re-sent (max_task_retries) or failed.
  bool relocate_call(std::unique_ptr<PendingCall>& call);
  // Where the skip of a failed call's position goes: true with call.actor.rank set, false when
  // the skip was parked for the restart's rank (sent once known) or no order is left to keep.
  bool route_skip(PendingCall& call);
  void keep_call(const PendingCall& call);
  void resend_calls_on(int rank, const std::string& reason, std::vector<ObjectId>& calls);
  // The flag of a call (or skip) at `seq` to `rank`: sends the resume first when `rank` is new
  // for this caller (0: ordered, 2: unordered, 255: a skip to drop).
  uint8_t call_mode(const ActorId& id, int rank, uint64_t seq, bool skip);

  // heartbeats, declarations and fencing (heartbeats.cpp)
  void heartbeat_tick();  // a turn's share of a heartbeat: send, then look for silent ranks
  void handle_heartbeat(int src, const char* data, size_t len);
  void handle_rank_dead(int src, const char* data, size_t len);
  void declare_dead(const head::DeadRank& d);  // the head: tell every rank, then fence it
  void fence_self(const std::string& reason);  // the head declared this rank dead
  void heartbeat_peer_failed(int rank, const std::string& reason);  // from on_peer_failed

  // head (rank 0): named actors
  void handle_name_register(int src, const char* data, size_t len);
  void handle_name_lookup(int src, const char* data, size_t len);
  void handle_name_reply(const char* data, size_t len);
  void handle_name_release(const char* data, size_t len);
  void handle_name_update(const char* data, size_t len);
  // A named actor's creator tells the head where it lives now, or that it is gone for good.
  void send_name_update(const std::string& name, const detail::ActorRef& ref);
  void send_name_release(const std::string& name, const ActorId& id);
  void handle_shutdown(const char* data, size_t len);  // message_handlers.cpp

  // the job's state across ranks, for the control socket (state_queries.cpp,
  // job_state_snapshot.cpp)
  void handle_state_query(int src, const char* data, size_t len);
  void handle_state_reply(int src, const char* data, size_t len);
  nlohmann::json timeline_part() const;
  void add_job_sections(nlohmann::json& j) const;  // rank 0: ranks, nodes, hosts, groups
  void add_placement_groups(nlohmann::json& j) const;

  // objects in the node store: results, locations, pulls, freeing (object_transfer.cpp)
 public:
  void free_stored(int holder, const ObjectId& id);

 private:
  ObjectPuller& puller();
  void carry_out(ObjectPuller::Outbox& out);  // what the puller returned: messages, RMA reads
  size_t pull_room_tick();  // copies waiting for store room tried again (ObjectPuller::retry_room)
  void pull_object(const ObjectId& id, int holder, size_t size, bool owner_record, PulledFn done);
  // Executor: opens or pulls the item's kStored arguments, pins them, then queues the task (or
  // hands the call to its actor); false when it has none (stored_args.cpp).
  bool fetch_stored_args(ExecItemPtr& item);
  bool fetch_stored_args(const ActorId& actor, ActorCallItem& call);
  using PinnedFn = std::function<void(ArgPins pins, detail::ErrorInfo error)>;
  void pin_stored(std::vector<detail::StoredArg> stored, PinnedFn then);
  void send_stored_result(int owner, const ObjectId& ret, size_t size,
                          std::vector<StatePtr> contained = {});
  bool reply_stored(int dest, const ObjectState& s);
  // Where a reader on another node pulls a ready stored value from (object_transfer.cpp).
  int copy_source(const StorePayload& sp) const;
  void handle_stored_result(int src, const char* data, size_t len);
  void handle_object_location(int src, const char* data, size_t len);
  void handle_pull_request(int src, const char* data, size_t len);
  void handle_pull_reply(int src, const char* data, size_t len);
  void handle_pull_done(int src, const char* data, size_t len);
  void handle_free_object(const char* data, size_t len);

  // distributed reference counting: the loop's side of BorrowProtocol (refcount.cpp)
  // Sends `b` once every owner of `refs` has counted `dest` (the body already lists their ids).
  void send_with_refs(int dest, Msg type, serde::Buffer& b, std::vector<StatePtr> refs);
  // The receiver's side: one credit per id (or, at the owner, the in-flight credit returned).
  std::vector<StatePtr> accept_refs(const std::vector<ObjectId>& ids);
  void add_contained(std::vector<StatePtr>& out, const ObjectState& s);
  // Once per loop turn: this turn's kBorrowAdd batches and the queued releases.
  size_t flush_refcount();
  bool known_failed(int rank) const { return failed_.contains(rank); }
  // `rank` is known failed from now on: no work goes there, its credits go (once per rank).
  void mark_failed(int rank);
  // A peer was declared dead: what waits on it fails now (peer_failure.cpp).
  void fail_work_on(int rank, const std::string& reason);
  void fail_owner_died(const StatePtr& s);
  void fail_dead_actor_call(PendingCall& call);
  void handle_borrow_add(int src, const char* data, size_t len);
  void handle_borrow_ack(const char* data, size_t len);
  void handle_borrow_release(int src, const char* data, size_t len);

  // placement groups — submitter side (pg_client.cpp)
 public:
  void pg_create(sched::PgSpec spec);
  void pg_remove(uint64_t pg);
  void pg_subscribe(uint64_t pg);
  PgRankState& pg_state() { return pg_; }

 private:
  void dispatch_pg_call(std::unique_ptr<PendingCall> call);
  void handle_pg_update(const char* data, size_t len);
  void handle_pg_reservations(const char* data, size_t len);
  void apply_pg_update(WireReader& r);
  // actors whose handle left before they had a rank: all of them (unplaced_actors.cpp)
 public:
  // Completes `reply` with the actor's rank (an int) once placed, or fails it (ActorDiedError).
  void await_actor_rank(const detail::ActorRef& a, StatePtr reply);
  void submit_creation(const ActorId& id, std::unique_ptr<PendingCall> call);
  // Any thread: the rank of an actor this rank has learnt the placement of, else -1.
  int placed_rank(const ActorId& id) const;

 private:
  void unknown_to_creator(UnplacedActor& u);  // its creator has no record of it
  bool resolve_unplaced(std::unique_ptr<PendingCall>& call);  // false: parked or failed
  bool unplaced_skip(PendingCall& call);  // true: send the skip to call.actor.rank now
  void kill_unplaced(const detail::ActorRef& a);
  void actor_placed(const ActorId& id, int rank);
  void actor_unplaced(const ActorId& id, const detail::ErrorInfo& e);
  void settle_unplaced(const ActorId& id, UnplacedActor& u);
  void handle_actor_where(int src, const char* data, size_t len);
  void handle_actor_placed(const char* data, size_t len);
  // head side, rank 0 (pg_head.cpp)
  void handle_pg_create(int src, const char* data, size_t len);
  void handle_pg_remove(const char* data, size_t len);
  void handle_pg_subscribe(int src, const char* data, size_t len);
  void handle_pg_prepared(int src, const char* data, size_t len);
  void handle_pg_freed();
  void pg_flush(head::PgOutbox& out);
  // bundle host side: the two-phase reservation on the gate (pg_bundles.cpp)
  // What work held goes back to the gate (and the head hears of it if it waits for room).
  void gate_release(const sched::ResourceSet& need, const PgContext& p,
                    const sched::GpuGrant& grant);
  void reject_exec(ExecItemPtr item);  // work of a group removed from this rank
  void handle_pg_prepare(int src, const char* data, size_t len);
  void handle_pg_commit(const char* data, size_t len);
  void handle_pg_rollback(const char* data, size_t len);
  void handle_pg_release(const char* data, size_t len);

  const Config cfg_;
  const net::Topology topo_;
  const int rank_, size_;
  net::Transport& transport_;
  ObjectTable objects_;
  Completions completions_;
  WorkerPool pool_;

  std::thread thread_;
  FunctionQueue<void(EventLoop&)> commands_;  // lock-free: see function_queue.hpp
  const std::chrono::microseconds spin_for_, yield_for_;
  std::atomic<bool> token_{false};   // held by the thread running a turn
  sched::ResourceSet default_task_need_;  // see default_task_need()
  std::atomic<int> drivers_{0};      // threads blocked in get() that drive turns themselves
  std::atomic<bool> closed_{false};  // the loop has stopped: nobody may run a turn
  const bool inline_tasks_;          // inline_tasks: bodies may run on the thread that admits them
  std::atomic<uint64_t> relief_gen_{0}, relief_done_{0};
  // The generation of a body the loop thread runs without relief, 0 when none: the heartbeat
  // thread relieves it if it is still running at a beat.
  std::atomic<uint64_t> unrelieved_gen_{0};
  std::atomic<bool> beats_watch_inline_{false};  // the heartbeat thread runs (and checks that)
  BodyDurations body_durations_;  // what bodies lately took, per function (body_durations.hpp)
  std::atomic<bool> stop_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<int> exit_code_{0};
  std::atomic<uint64_t> object_seq_{1};
  std::atomic<uint64_t> actor_seq_{1};

  // --- submitter state (loop thread) ---
  sched::ClusterView view_;  // true totals and the topology
  TaskPlacer placer_;        // where ready tasks go: the slot view, the load, reservations
  ActorPlacer actor_placer_;  // where the actors this rank creates go
  DependencyWaiter<PendingCall> deps_;  // calls held until their ref arguments are done
  // Nodes recycled (recycling_allocator.hpp): one per task submitted, freed at its result.
  std::unordered_map<ObjectId, InFlight, std::hash<ObjectId>, std::equal_to<ObjectId>,
                     RecyclingAllocator<std::pair<const ObjectId, InFlight>>>
      inflight_;
  std::unordered_map<ObjectId, int> calls_inflight_;  // actor call result → the actor's rank
  std::unordered_map<ObjectId, std::vector<int>> subscribers_;  // owner: borrowers waiting
  std::unordered_map<ActorId, CallerSeq> call_seq_;             // positions per actor called
  std::unordered_map<ActorId, ActorLife> lives_;    // creator: restartable actors it created
  std::unordered_map<ObjectId, std::unique_ptr<PendingCall>> kept_calls_;  // max_task_retries
  struct LostCallResult {  // hold_lost_call_result
    int holder = -1;
    detail::ErrorInfo error;
    std::chrono::steady_clock::time_point until;
  };
  std::unordered_map<ObjectId, LostCallResult> lost_call_results_;
  std::unordered_map<uint64_t, StatePtr> requests_;             // head replies
  uint64_t request_seq_ = 1;

  // --- executor state (loop thread) ---
  ExecGate gate_;  // this rank's resources, its bundles, and the work waiting for them
  StealPlanner steal_;
  RepeatedWarnings warnings_{std::chrono::seconds(10)};  // identical warnings, counted
  OpsCounters ops_;  // for weft status and metrics (submitter.cpp counts)

  // --- actors hosted here ---
  std::unordered_map<ActorId, std::unique_ptr<ActorInstance>> actors_;
  std::unordered_map<ActorId, std::vector<std::pair<int, ActorCallItem>>> orphan_calls_;
  std::filesystem::path checkpoint_dir_;  // made on first use

  // --- head (rank 0) ---
  head::ActorDirectory directory_;
  std::unique_ptr<StateGather> gather_;  // weft status across ranks (state_queries.cpp)

  // --- data plane (object_transfer.cpp) ---
  std::unique_ptr<ObjectPuller> puller_;  // made at the first pull (the store exists by then)
  bool recheck_posted_ = false;           // a command will look at copies being made again
  // Owner: refs whose values a task reads from a store by location, kept until its result.
  std::unordered_map<ObjectId, std::vector<StatePtr>> arg_holds_;

  // --- failed ranks and reference counting (refcount.cpp) ---
  FailedRanks failed_;
  BorrowProtocol borrow_;
  MsgOutbox outbox_;  // what a protocol call returned, sent right after it (send_all)
  MessageScratch scratch_;  // buffers for the submit and result messages, reused

  // --- actors whose handles carry no rank yet (unplaced_actors.cpp) ---
  std::unordered_map<ActorId, UnplacedActor> unplaced_;
  mutable std::mutex placed_mu_;                  // guards placed_, read by user threads
  std::unordered_map<ActorId, int> placed_;       // ranks learnt for rank-less handles

  // --- placement groups (every rank; the head's manager on rank 0) ---
  PgRankState pg_;

  // --- heartbeats (heartbeats.cpp) ---
  const std::chrono::milliseconds failure_timeout_;  // 0: heartbeats off
  std::optional<head::FailureDetector> detector_;    // loop thread (token holder)
  std::atomic<bool> beat_queued_{false};             // a heartbeat turn is queued as a command
  std::atomic<bool> ended_by_failure_{false};
  std::atomic<bool> fenced_{false};
  uint64_t beat_seq_ = 0;
  std::unique_ptr<HeartbeatThread> heartbeat_;  // last member: stopped first
};

// The loop of the running runtime (null when none).
EventLoop* current_loop();
void set_current_loop(EventLoop* l);

}  // namespace weft::core
