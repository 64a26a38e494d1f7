// What this rank's submitter counts for `weft status` and `weft metrics` (job_state_snapshot.cpp):
// tasks it submitted and how they ended, and the latest requests it refused as infeasible, with
// the reason (the missing resource). Loop thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

namespace weft::core {

struct OpsCounters {
  struct Infeasible {
    std::string what;  // "task f 'name'"
    std::string why;   // the missing resource, as the InfeasibleError says it
  };
  static constexpr size_t kKeptInfeasible = 64;

  uint64_t tasks_submitted = 0;       // sent to a rank (here or elsewhere)
  uint64_t tasks_finished = 0;        // their result arrived
  uint64_t tasks_failed = 0;          // their error arrived (after retries)
  uint64_t tasks_infeasible = 0;      // refused before sending: no rank could ever run them
  std::deque<Infeasible> infeasible;  // the latest kKeptInfeasible of them

  void note_infeasible(std::string what, std::string why) {
    ++tasks_infeasible;
    infeasible.push_back({std::move(what), std::move(why)});
    if (infeasible.size() > kKeptInfeasible) infeasible.pop_front();
  }
};

}  // namespace weft::core
