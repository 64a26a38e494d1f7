#include "core/steal_planner.hpp"

namespace weft::core {

StealPlanner::StealPlanner(int rank, std::vector<int> node_of_rank, Clock::duration delay,
                           Clock::duration timeout)
    : rank_(rank),
      node_(std::move(node_of_rank)),
      delay_(delay),
      timeout_(timeout),
      backlog_(node_.size(), 0) {}

std::optional<uint32_t> StealPlanner::backlog_report(uint32_t backlog, Clock::time_point now) {
  if (backlog == 0) {
    waiting_since_.reset();
    if (reported_ == 0) return std::nullopt;
    reported_ = 0;
    return 0u;
  }
  if (!waiting_since_) waiting_since_ = now;
  if (reported_ == 0) {
    if (now - *waiting_since_ < delay_) return std::nullopt;
  } else if (backlog < 2 * reported_ && 2 * backlog > reported_) {
    return std::nullopt;  // within a factor of two of what the others know
  }
  reported_ = backlog;
  return backlog;
}

void StealPlanner::set_backlog(int rank, uint32_t n) {
  if (rank < 0 || rank >= static_cast<int>(backlog_.size()) || rank == rank_) return;
  if ((backlog_[rank] > 0) != (n > 0)) ranks_with_backlog_ += n > 0 ? 1 : -1;
  backlog_[rank] = n;
}

void StealPlanner::on_backlog(int rank, uint32_t backlog) { set_backlog(rank, backlog); }

int StealPlanner::victim_to_ask(bool idle, Clock::time_point now) {
  if (!idle) {
    idle_since_.reset();
    return -1;
  }
  if (!idle_since_) idle_since_ = now;
  if (ranks_with_backlog_ == 0 || now - *idle_since_ < delay_) return -1;
  if (asked_ >= 0 && now - asked_at_ < timeout_) return -1;
  const int n = static_cast<int>(backlog_.size());
  int best = -1;
  for (int i = 1; i < n; ++i) {  // nearest ranks first among equals
    int r = (rank_ + i) % n;
    if (backlog_[r] == 0) continue;
    if (best < 0 || backlog_[r] > backlog_[best] ||
        (backlog_[r] == backlog_[best] && node_[r] == node_[rank_] && node_[best] != node_[rank_]))
      best = r;
  }
  if (best >= 0) {
    asked_ = best;
    asked_at_ = now;
  }
  return best;
}

void StealPlanner::on_reply(int victim, uint32_t given) {
  if (victim == asked_) asked_ = -1;
  uint32_t left = given == 0 || given >= backlog_[victim] ? 0 : backlog_[victim] - given;
  set_backlog(victim, left);
  idle_since_.reset();  // what it gave is on its way; idle counts again from here
}

void StealPlanner::on_peer_failed(int rank) {
  set_backlog(rank, 0);
  if (rank == asked_) asked_ = -1;
}

}  // namespace weft::core
