// Work stealing between the ranks' executor gates, as protocol state without I/O: the event loop
// feeds it what happened and sends what it returns (src/core/work_stealing.cpp); unit tests drive
// it directly (tests/unit/core/steal_planner_test.cpp).
//
// Victims: a rank whose gate has had stealable tasks waiting for `delay` tells every other rank
// its backlog, again when it halves or doubles, and when it is gone. Thieves: a rank that has had
// a free CPU slot and nothing queued for `delay` asks the rank with the largest known backlog
// (its own node first among equals) for work, one request at a time; the victim hands over up to
// half of its backlog, what fits the thief's free CPUs. The delay keeps a saturated job quiet:
// reports go out only when a rank stays behind, not each time one task waits a moment.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace weft::core {

class StealPlanner {
 public:
  using Clock = std::chrono::steady_clock;

  // `node_of_rank[r]`: r's node id. `timeout`: an unanswered request may be replaced after it.
  StealPlanner(int rank, std::vector<int> node_of_rank, Clock::duration delay,
               Clock::duration timeout);

  // --- victim side --------------------------------------------------------------------------
  // Every loop turn: `backlog` stealable tasks wait at this rank's gate. Returns the count to
  // tell every other rank, when they must hear of a change.
  std::optional<uint32_t> backlog_report(uint32_t backlog, Clock::time_point now);
  // The most tasks one request may take out of `backlog`: half, rounded up.
  static uint32_t grant_limit(uint32_t backlog) { return (backlog + 1) / 2; }

  // --- thief side ---------------------------------------------------------------------------
  void on_backlog(int rank, uint32_t backlog);
  // Every loop turn: `idle` = a CPU slot is free and nothing waits at this rank's gate. Returns
  // the rank to ask now, or -1.
  int victim_to_ask(bool idle, Clock::time_point now);
  void on_reply(int victim, uint32_t given);
  void on_peer_failed(int rank);

  uint32_t known_backlog(int rank) const { return backlog_[rank]; }
  // False when no other rank reported a backlog: the loop's per-turn check stops there.
  bool any_backlog() const { return ranks_with_backlog_ > 0; }
  bool reported() const { return reported_ > 0; }
  int outstanding() const { return asked_; }

 private:
  void set_backlog(int rank, uint32_t n);

  const int rank_;
  const std::vector<int> node_;
  const Clock::duration delay_, timeout_;
  // victim
  uint32_t reported_ = 0;
  std::optional<Clock::time_point> waiting_since_;
  // thief
  std::vector<uint32_t> backlog_;
  int ranks_with_backlog_ = 0;
  std::optional<Clock::time_point> idle_since_;
  int asked_ = -1;
  Clock::time_point asked_at_{};
};

}  // namespace weft::core
