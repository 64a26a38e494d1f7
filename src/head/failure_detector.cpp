#include "head/failure_detector.hpp"

#include <algorithm>
#include <stdexcept>

namespace weft::head {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

FailureDetector::FailureDetector(std::vector<int> ranks, milliseconds timeout,
                                 Clock::time_point start, milliseconds max_tick_gap)
    : timeout_(timeout),
      max_gap_(max_tick_gap.count() > 0 ? max_tick_gap : timeout / 2),
      busy_limit_(timeout * 10),
      last_tick_(start) {
  if (timeout.count() <= 0) throw std::invalid_argument("FailureDetector: timeout must be > 0");
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  for (int r : ranks) watched_.push_back({r, start});
}

bool FailureDetector::on_heartbeat(int rank, Clock::time_point now) {
  for (Watched& w : watched_) {
    if (w.rank != rank) continue;
    w.last = std::max(w.last, now);
    return true;
  }
  return false;
}

void FailureDetector::forget(int rank) {
  std::erase_if(watched_, [rank](const Watched& w) { return w.rank == rank; });
}

bool FailureDetector::watching(int rank) const {
  return std::any_of(watched_.begin(), watched_.end(),
                     [rank](const Watched& w) { return w.rank == rank; });
}

std::vector<DeadRank> FailureDetector::tick(Clock::time_point now, const RunningFn& running) {
  std::vector<DeadRank> dead;
  if (now <= last_tick_) return dead;
  const auto gap = now - last_tick_;
  last_tick_ = now;
  if (gap > max_gap_) {
    // This watcher did not run for a while: heartbeats may be waiting unread, so the pause is
    // nobody's silence. Every rank is credited with it (never beyond now).
    ++pauses_;
    for (Watched& w : watched_) w.last = std::min(now, w.last + gap);
    return dead;
  }
  for (size_t i = 0; i < watched_.size();) {
    const milliseconds silent = duration_cast<milliseconds>(now - watched_[i].last);
    if (silent <= timeout_) {
      ++i;
      continue;
    }
    const bool busy = running && running(watched_[i].rank);
    if (busy && silent <= busy_limit_) {
      ++i;
      continue;
    }
    dead.push_back({watched_[i].rank, silent,
                    "no heartbeat for " + std::to_string(silent.count()) + " ms" +
                        (busy ? " while its process runs (its event loop does not turn)" : "") +
                        ", failure_timeout_ms = " + std::to_string(timeout_.count())});
    watched_.erase(watched_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return dead;
}

}  // namespace weft::head
