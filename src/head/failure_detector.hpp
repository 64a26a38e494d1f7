// Heartbeat failure detection, as pure logic: the caller feeds it heartbeat arrivals and clock
// ticks (time is injected; nothing here reads a clock, sleeps or sends) and it answers which
// watched ranks have been silent for longer than the timeout, each once, with the reason. The
// head (rank 0) watches every other rank with one; every other rank watches the head with one,
// so a head that stops (killed, stopped, cut off) ends the job instead of leaving it waiting.
//
// A watcher that itself stops running (its process descheduled or stopped, its loop delayed)
// must not blame the others for its own pause: when two ticks are further apart than
// `max_tick_gap`, the time between them is not counted as silence of anyone.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace weft::head {

struct DeadRank {
  int rank = -1;
  std::chrono::milliseconds silent{0};  // since its last heartbeat (or since watching began)
  std::string reason;                   // "no heartbeat for 612 ms, failure_timeout_ms = 500"
};

class FailureDetector {
 public:
  using Clock = std::chrono::steady_clock;

  // Watches `ranks` from `start` on (as if each had sent a heartbeat then). `timeout` > 0.
  // `max_tick_gap`: a longer gap between two ticks is the watcher's own pause (default: half the
  // timeout).
  FailureDetector(std::vector<int> ranks, std::chrono::milliseconds timeout,
                  Clock::time_point start,
                  std::chrono::milliseconds max_tick_gap = std::chrono::milliseconds(0));

  // A heartbeat from `rank` arrived at `now`. False when the rank is not watched (never was,
  // already declared dead, or forgotten): a fenced rank's beats change nothing.
  bool on_heartbeat(int rank, Clock::time_point now);
  // The rank was reported failed some other way (its process exited, UCX): stop watching it, so
  // it is not declared a second time.
  void forget(int rank);
  // Whether a silent rank's process is known to be running (not stopped): true holds off its
  // declaration up to busy_limit; false or unknown (another host) declares it at the timeout.
  using RunningFn = std::function<bool(int rank)>;
  // Ranks silent for longer than the timeout at `now`, each returned once and then no longer
  // watched. With `running`, a silent rank whose process still runs (its event loop is only
  // slow: one long turn) is declared only once silent for longer than busy_limit.
  std::vector<DeadRank> tick(Clock::time_point now, const RunningFn& running = {});
  // How long a running but silent rank is spared (default: 10 x the timeout).
  void set_busy_limit(std::chrono::milliseconds limit) { busy_limit_ = limit; }

  bool watching(int rank) const;
  std::chrono::milliseconds timeout() const { return timeout_; }
  // How many times a gap between ticks was taken for the watcher's own pause (for tests, logs).
  size_t pauses() const { return pauses_; }

 private:
  struct Watched {
    int rank;
    Clock::time_point last;  // last heartbeat, moved later by the watcher's own pauses
  };
  std::vector<Watched> watched_;
  std::chrono::milliseconds timeout_, max_gap_, busy_limit_;
  Clock::time_point last_tick_;
  size_t pauses_ = 0;
};

}  // namespace weft::head
