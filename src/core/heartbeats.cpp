// Failure detection for ranks that stop without dying (stopped, deadlocked, swapping, cut off),
// and fencing. The transport finds dead processes (HostLiveness on this host, UCX errors across
// nodes); a hung rank's process lives on, so only its silence shows it:
//  * every rank's HeartbeatThread calls for a heartbeat turn every failure_timeout_ms / 5. The
//    turn runs on that thread as soon as the loop's token is free, else as the next turn's first
//    command. Task bodies never hold the token (loop_turns.cpp: the loop thread hands it back
//    before it runs a task inline), so a long task cannot delay a heartbeat; only a single turn
//    can, and turns are short.
//  * a worker's turn sends kHeartbeat to the head; the head's sends kHeartbeat to every worker.
//    Each side keeps a head::FailureDetector: the head watches every other rank, each other
//    rank watches the head.
//  * slow is not dead: a silent rank of the watcher's host whose process still runs (not
//    stopped) is spared up to 10 x the timeout (a long turn); others are judged at the timeout.
//  * a rank silent for failure_timeout_ms is declared dead by the head: one log line names it,
//    its host and the silence; kRankDead goes to every rank, the dead one included (its notice
//    to exit, written into its ring before anything of it is dropped); then the head's
//    transport treats it as failed. Each rank does the same on kRankDead, so everyone runs its
//    on_peer_failed path once (the transport reports a rank once, whichever way it learnt
//    first), and nothing the dead rank sends is read again: it is fenced.
//  * a fenced rank that runs again reads its kRankDead, logs one line and stops: its loop ends,
//    weft::run / serve() return 1, without collectives (runtime.cpp). If the notice is lost it
//    still stops: the head no longer answers it, and its own detector declares the head gone.
//  * a worker that hears nothing from the head for failure_timeout_ms treats the head as failed
//    (on_peer_failed(0): the job is over, one line, the rank stops serving).
#include "common/log.hpp"
#include "core/event_loop.hpp"

namespace weft::core {
namespace {

// Heartbeats per timeout: a rank is declared after missing about this many in a row.
constexpr int kBeatsPerTimeout = 5;

}  // namespace

void EventLoop::start_heartbeats() {
  if (failure_timeout_.count() == 0 || size_ < 2 || heartbeat_) return;
  std::vector<int> watched;
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r) watched.push_back(r);
  } else {
    watched.push_back(0);
  }
  const auto interval = std::max(std::chrono::milliseconds(1), failure_timeout_ / kBeatsPerTimeout);
  // The detector is built before the first beat and only touched by turns from then on.
  post([watched = std::move(watched), this](EventLoop&) {
    detector_.emplace(watched, failure_timeout_, std::chrono::steady_clock::now());
  });
  heartbeat_ = std::make_unique<HeartbeatThread>(interval, [this] {
    log::set_rank(rank_);
    relieve_long_inline_body();  // a body thought short that is not (loop_turns.cpp)
    if (beat_queued_.exchange(true, std::memory_order_acq_rel)) return;  // one is still queued
    run_or_post([](EventLoop& l) {
      l.beat_queued_.store(false, std::memory_order_release);
      l.heartbeat_tick();
    });
  });
  beats_watch_inline_.store(true, std::memory_order_release);
}

void EventLoop::heartbeat_tick() {
  if (!detector_ || stop_.load(std::memory_order_acquire)) return;
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(beat_seq_++);
  if (rank_ == 0) {
    for (int r = 1; r < size_; ++r)
      if (!known_failed(r)) send(r, Msg::kHeartbeat, b);
  } else {
    send(0, Msg::kHeartbeat, b);
  }
  // Read what has arrived before judging anyone's silence: a heartbeat (or the head's shutdown)
  // may be waiting in a ring while this rank was busy.
  transport_.poll(*this);
  if (!detector_ || stop_.load(std::memory_order_acquire)) return;
  // A silent rank of this host whose process still runs is only slow (one long turn: a pull
  // waiting for store room, a restore): spared up to 10 x the timeout. A stopped one, or one on
  // another host (nothing to ask), is declared at the timeout.
  auto running = [this](int r) { return transport_.peer_running(r).value_or(false); };
  for (const head::DeadRank& d : detector_->tick(std::chrono::steady_clock::now(), running)) {
    if (rank_ == 0) {
      declare_dead(d);
    } else {
      transport_.declare_failed(0, "no heartbeat from the head: " + d.reason);
    }
  }
}

void EventLoop::handle_heartbeat(int src, const char* data, size_t len) {
  WireReader r(data, len);
  r.get<uint64_t>();  // its sequence number: for traces; arrival time is what counts
  if (detector_) detector_->on_heartbeat(src, std::chrono::steady_clock::now());
}

void EventLoop::declare_dead(const head::DeadRank& d) {
  const std::string reason = "declared dead by the head: " + d.reason;
  WEFT_LOG(Error) << topo_.describe(d.rank) << " is declared dead: " << d.reason
                  << "; every rank drops its messages from now on";
  serde::Buffer b;
  WireWriter w(b);
  w.put<int32_t>(d.rank);
  w.put_str(reason);
  // To the dead rank first, while its outbox is still flushed: if it ever runs again, this is
  // the first thing of ours it reads after what it had not read yet, and it stops.
  send(d.rank, Msg::kRankDead, b);
  // Then the head's own transport fences it; on_peer_failed tells every other rank.
  transport_.declare_failed(d.rank, reason);
}

void EventLoop::heartbeat_peer_failed(int rank, const std::string& reason) {
  if (detector_) detector_->forget(rank);
  if (rank_ != 0) return;
  // However the head learnt it (heartbeats, this host's process check, UCX), every rank hears
  // it from the head too: ranks on other hosts that never talk to that rank would not notice.
  serde::Buffer b;
  WireWriter w(b);
  w.put<int32_t>(rank);
  w.put_str(reason);
  for (int r = 1; r < size_; ++r)
    if (r != rank && !known_failed(r)) send(r, Msg::kRankDead, b);
}

void EventLoop::handle_rank_dead(int src, const char* data, size_t len) {
  WireReader r(data, len);
  const int rank = r.get<int32_t>();
  const std::string reason = r.get_str();
  if (src != 0 || rank < 0 || rank >= size_ || rank == 0) {
    WEFT_LOG(Error) << "dropped a dead-rank notice about rank " << rank << " from rank " << src
                    << ": only the head declares ranks dead";
    return;
  }
  if (rank == rank_) return fence_self(reason);
  transport_.declare_failed(rank, reason);  // on_peer_failed from this turn's poll, once
}

void EventLoop::fence_self(const std::string& reason) {
  if (fenced_.exchange(true)) return;
  ended_by_failure_ = true;
  WEFT_LOG(Error) << topo_.describe(rank_) << " was " << reason
                  << "; it is fenced (every rank drops its messages) and exits";
  exit_code_ = 1;
  stop_ = true;
  // Nothing of ours is read any more: drop every outbox, so the loop can end at once, and
  // record every rank as gone, so this rank ends without collectives.
  for (int r = 0; r < size_; ++r)
    if (r != rank_) transport_.declare_failed(r, "this rank was fenced");
}

}  // namespace weft::core
