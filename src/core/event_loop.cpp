#include "core/event_loop.hpp"
#include "weft/detail/runtime_api.hpp"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

#include "common/check.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "core/idle_backoff.hpp"
#include "core/state_gather.hpp"

namespace weft::core {
namespace {
std::atomic<EventLoop*> g_loop{nullptr};

std::chrono::microseconds config_us(const Config& cfg, const char* key, int64_t def) {
  const int64_t v = cfg.get_int(key, def);
  if (v < 0) throw ConfigError(std::string(key) + " must be ≥ 0, got " + std::to_string(v));
  return std::chrono::microseconds(v);
}
std::chrono::milliseconds config_ms(const Config& cfg, const char* key, int64_t def) {
  return std::chrono::milliseconds(config_us(cfg, key, def).count());
}
}  // namespace

EventLoop* current_loop() { return g_loop.load(std::memory_order_acquire); }
void set_current_loop(EventLoop* l) { g_loop.store(l, std::memory_order_release); }

EventLoop::EventLoop(const Config& cfg, const net::Topology& topo, net::Transport& transport,
                     std::vector<sched::RankInfo> ranks, int pool_threads)
    : cfg_(cfg),
      topo_(topo),
      rank_(topo.rank),
      size_(topo.size),
      transport_(transport),
      pool_(pool_threads),
      spin_for_(config_us(cfg, "loop_spin_us", 50)),
      yield_for_(config_us(cfg, "loop_yield_us", 300)),
      inline_tasks_(cfg.get_bool("inline_tasks", true)),
      view_(ranks),
      placer_(view_, topo.rank),
      actor_placer_(view_, topo.rank),
      gate_(topo.rank, ranks[topo.rank].total, rank_gpu_ids(ranks[topo.rank])),
      steal_(topo.rank, topo.node_of_rank, config_us(cfg, "steal_delay_us", 200),
             std::chrono::milliseconds(50)),
      failed_(topo.size),
      borrow_(topo.rank, objects_, failed_),
      pg_(ranks, topo.rank),
      failure_timeout_(config_ms(cfg, "failure_timeout_ms", 500)) {
  if (rank_ == 0) gather_ = std::make_unique<StateGather>(std::chrono::milliseconds(1000));
  default_task_need_ = to_need(detail::default_submit_options());
  detail::actor_ready_method();  // registered on every rank before any actor can be called
}

EventLoop::~EventLoop() {
  heartbeat_.reset();  // its beats run turns of this loop
  if (thread_.joinable()) {
    stop_ = true;
    transport_.wake();
    thread_.join();
  }
  // Task bodies still running post their ends to this loop (run_or_post): they finish before
  // the queue they post into goes (the pool's own destructor would wait only after it).
  pool_.drain(2000);
  // Commands still queued never run; what they own is destroyed with them (PendingCalls too).
  commands_.clear();
}

void EventLoop::start() {
  thread_ = std::thread([this] {
    name_this_thread("loop");
    run();
  });
}

void EventLoop::post(Command c) {
  commands_.push(std::move(c));
  transport_.wake();
}

size_t EventLoop::drain_commands() {
  size_t n = 0;
  Command c;
  while (n < kCommandBatch && commands_.try_pop(c)) {
    Command owned = std::move(c);
    owned(*this);
    ++n;
  }
  return n;
}

void EventLoop::run() {
  log::set_rank(rank_);
  // Adaptive back-off, by time since the last work: spin (a reply is often microseconds away
  // and a futex wake costs tens of microseconds here) while this core is not wanted by another
  // thread, then yield the core, then park in the transport until a message or a local command
  // wakes us (idle_backoff.hpp). Tunable: loop_spin_us, loop_yield_us.
  // While a thread blocked in get() drives the turns itself, this thread steps aside.
  IdleBackoff& backoff = IdleBackoff::this_thread(spin_for_, yield_for_);
  auto last_work = std::chrono::steady_clock::now();
  int parks = 0;
  std::chrono::steady_clock::time_point stop_since{};
  while (true) {
    const bool stopping = stop_.load(std::memory_order_acquire);
    if (!stopping && drivers_.load(std::memory_order_acquire) > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      last_work = std::chrono::steady_clock::now();
      parks = 0;
      continue;
    }
    if (!try_token()) {  // a driver's turn is ending
      std::this_thread::yield();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    size_t n = loop_turn(now);
    if (stopping) {
      if (stop_since == std::chrono::steady_clock::time_point{}) stop_since = now;
      // Let the shutdown messages (and anything before them) leave before this loop ends.
      if (transport_.idle() || now - stop_since > std::chrono::seconds(2)) {
        log_repeated_warnings(now, /*final=*/true);
        closed_.store(true, std::memory_order_release);
        release_token();
        break;
      }
    }
    if (n > 0) {
      release_token();
      last_work = now;
      parks = 0;
      continue;
    }
    const auto step = backoff.step(now - last_work);
    if (step == IdleBackoff::Step::kSpin) {
      release_token();
      for (int i = 0; i < 16; ++i) _mm_pause();
    } else if (step == IdleBackoff::Step::kYield) {
      release_token();
      backoff.yield();
    } else {
      // Parked with the token: a driver that arrives meanwhile cannot take it, wakes this
      // thread (its post rings the doorbell) and waits for its turn like any caller.
      ++parks;
      transport_.wait(std::chrono::microseconds(std::min(2000, 50 * parks)));
      release_token();
    }
  }
  stopped_ = true;
  completions_.notify();
}

void EventLoop::shutdown_job(int exit_code) {
  exit_code_ = exit_code;
  post([exit_code](EventLoop& l) {
    serde::Buffer b;
    WireWriter w(b);
    w.put<int32_t>(exit_code);
    // The failed ranks the head knows: every rank then skips the collective end (runtime.cpp).
    const std::vector<int> failed = l.failed_ranks();
    w.put<uint32_t>(static_cast<uint32_t>(failed.size()));
    for (int f : failed) w.put<int32_t>(f);
    for (int r = 0; r < l.size_; ++r)
      if (r != l.rank_) l.send(r, Msg::kShutdown, b);
    l.stop_ = true;
  });
}

int EventLoop::wait_stopped() {
  if (thread_.joinable()) thread_.join();
  return exit_code_.load();
}

void EventLoop::send(int dest, Msg type, const serde::Buffer& b) {
  transport_.send(dest, static_cast<uint16_t>(type), b.data(), b.size());
}

sched::ResourceSet to_need(const detail::SubmitOptions& o) {
  // Per call when a caller passes options, and a burst passes the same ones: the custom
  // resources last converted on this thread are kept, and equal ones (a compare of short
  // strings) are copied instead of interning each name again (about 200 instructions a name).
  thread_local std::vector<std::pair<std::string, double>> last_resources;
  thread_local sched::ResourceSet last_custom;
  if (o.resources != last_resources) {
    // Both built aside, then moved in (no throw): a failed allocation leaves the pair unchanged.
    sched::ResourceSet custom;
    for (const auto& [k, v] : o.resources) custom.set(k, v);
    auto key = o.resources;
    last_custom = std::move(custom);
    last_resources = std::move(key);
  }
  sched::ResourceSet s = last_custom;
  // The two common names are not looked up again either.
  if (o.num_cpus > 0) s.set(sched::ResourceName::cpu(), o.num_cpus);
  if (o.num_gpus > 0) s.set(sched::ResourceName::gpu(), o.num_gpus);
  if (o.memory > 0) s.set("memory", o.memory);
  return s;
}

void EventLoop::on_peer_failed(int rank, const std::string& reason) {
  mark_failed(rank);
  steal_.on_peer_failed(rank);
  if (stop_.load(std::memory_order_acquire)) {
    // The job is ending: when a rank has failed, the others leave without a barrier, so one
    // that leaves first is no failure, and the exit code stays the driver's.
    WEFT_LOG(Debug) << "rank " << rank << " left while this rank ends: " << reason;
    return;
  }
  if (rank == 0 && rank_ != 0) {
    if (puller_) {  // pulls from it fail, its pins go; the job is over, nothing is asked again
      ObjectPuller::Outbox ignored;
      puller_->peer_failed(rank, reason, ignored);
    }
    // The job cannot go on without its driver and head: one line, then this rank ends.
    WEFT_LOG(Error) << topo_.describe(0) << " (the driver and head) failed: " << reason
                    << "; the job is over, " << topo_.describe(rank_) << " stops serving";
    ended_by_failure_ = true;
    exit_code_ = 1;
    stop_ = true;
    fail_work_on(rank, reason);
    return;
  }
  WEFT_LOG(Error) << topo_.describe(rank) << " failed: " << reason;
  heartbeat_peer_failed(rank, reason);  // the head tells every rank (heartbeats.cpp)
  if (rank_ == 0) {  // names of actors that died with it for good are free again
    for (const std::string& name : directory_.drop_host(rank))
      WEFT_LOG(Info) << "named actor '" << name << "' died with rank " << rank
                     << " and is not restarted; the name is free";
  }
  // Tasks first: one whose result this rank was still copying from there is re-run, so the
  // copy's failure (next) finds an attempt given up on, not the task's final answer.
  fail_work_on(rank, reason);
  if (puller_) {  // pulls from it ask the objects' owners, or fail; its pins go
    ObjectPuller::Outbox out;
    puller_->peer_failed(rank, reason, out);
    carry_out(out);
  }
}

// --- named actors (rank 0 holds the directory) ------------------------------------------------

void EventLoop::request_named(const std::string& name, detail::ActorRef ref, StatePtr reply,
                              bool reg) {
  uint64_t req = request_seq_++;
  requests_[req] = std::move(reply);
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(req);
  w.put_str(name);
  if (reg) w.put<detail::ActorRef>(ref);
  send(0, reg ? Msg::kNameRegister : Msg::kNameLookup, b);
}

void EventLoop::handle_name_register(int src, const char* data, size_t len) {
  WireReader r(data, len);
  uint64_t req = r.get<uint64_t>();
  std::string name = r.get_str();
  auto ref = r.get<detail::ActorRef>();
  bool ok = directory_.add(name, ref);
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(req);
  w.put<uint8_t>(ok ? 1 : 0);
  w.put<detail::ActorRef>(ok ? ref : *directory_.find(name));
  send(src, Msg::kNameReply, b);
}

void EventLoop::handle_name_lookup(int src, const char* data, size_t len) {
  WireReader r(data, len);
  uint64_t req = r.get<uint64_t>();
  std::string name = r.get_str();
  auto found = directory_.find(name);
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(req);
  w.put<uint8_t>(found ? 1 : 0);
  w.put<detail::ActorRef>(found ? *found : detail::ActorRef{});
  send(src, Msg::kNameReply, b);
}

void EventLoop::handle_name_reply(const char* data, size_t len) {
  WireReader r(data, len);
  uint64_t req = r.get<uint64_t>();
  uint8_t ok = r.get<uint8_t>();
  auto ref = r.get<detail::ActorRef>();
  auto it = requests_.find(req);
  if (it == requests_.end()) return;
  StatePtr s = std::move(it->second);
  requests_.erase(it);
  std::vector<char> bytes(1 + sizeof ref);
  bytes[0] = static_cast<char>(ok);
  std::memcpy(bytes.data() + 1, &ref, sizeof ref);
  complete_ok(*s, std::make_shared<detail::InlinePayload>(std::move(bytes)), completions_);
  on_object_done(s);
}

void EventLoop::handle_name_release(const char* data, size_t len) {
  WireReader r(data, len);
  std::string name = r.get_str();
  auto id = r.get<ActorId>();
  directory_.remove(name, id);
}

void EventLoop::handle_name_update(const char* data, size_t len) {
  WireReader r(data, len);
  std::string name = r.get_str();
  auto ref = r.get<detail::ActorRef>();
  if (directory_.update(name, ref))
    WEFT_LOG(Info) << "named actor '" << name << "' (" << ref.id.str() << ") now lives on rank "
                   << ref.rank;
}

void EventLoop::send_name_update(const std::string& name, const detail::ActorRef& ref) {
  serde::Buffer b;
  WireWriter w(b);
  w.put_str(name);
  w.put<detail::ActorRef>(ref);
  send(0, Msg::kNameUpdate, b);
}

void EventLoop::send_name_release(const std::string& name, const ActorId& id) {
  serde::Buffer b;
  WireWriter w(b);
  w.put_str(name);
  w.put<ActorId>(id);
  send(0, Msg::kNameRelease, b);
}

}  // namespace weft::core
