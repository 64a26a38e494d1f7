// StateGather: rank 0's side of `weft status`, `list`, `metrics` and `timeline` across the job
// (docs/operations.md, "The weft CLI"). Rank 0 asks every live rank for its part (kStateQuery:
// what that rank's gate queues and why, what it submitted, its actors, objects, metrics and
// timeline) and merges the parts it has when the last one arrives or the deadline passes; a rank
// that did not answer in time, or died meanwhile, is named in the merged view with the reason.
// No I/O: the loop sends the queries and feeds replies in (state_queries.cpp), and unit tests
// drive it directly (tests/unit/core/state_gather_test.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace weft::core {

// What a query asks each rank for, on the wire (kStateQuery's flags).
inline constexpr uint8_t kWantObjects = 1;   // the objects it owns or borrows
inline constexpr uint8_t kWantTimeline = 2;  // its timeline rings

// The parts, merged into one view of the job (the JSON `weft` reads). `own` is rank 0's part,
// which also carries the job-wide sections (ranks, nodes, groups); `parts` the other ranks'
// (with rank 0's own among them or not); `missing` the ranks that gave none, with why.
nlohmann::json merge_parts(const nlohmann::json& own, const std::map<int, nlohmann::json>& parts,
                           const std::map<int, std::string>& missing);

class StateGather {
 public:
  using Clock = std::chrono::steady_clock;
  using Done = std::function<void(nlohmann::json merged)>;

  explicit StateGather(std::chrono::milliseconds timeout) : timeout_(timeout) {}

  // A new gather: rank 0's part and the ranks to ask. Completes at once (done runs, returns 0)
  // when there is nobody to ask; else returns the query id to send.
  uint64_t begin(nlohmann::json own, const std::vector<int>& ask, Done done, Clock::time_point now);
  // A rank's part. A reply to a gather already finished, or from a rank not asked, is dropped.
  void on_reply(uint64_t id, int rank, nlohmann::json part);
  // The rank died: every gather waiting for it goes on without it.
  void on_rank_failed(int rank, const std::string& why);
  // Finishes the gathers whose deadline passed, naming the ranks that did not answer.
  void expire(Clock::time_point now);
  bool active() const { return !pending_.empty(); }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  struct Pending {
    nlohmann::json own;
    std::map<int, nlohmann::json> parts;
    std::map<int, std::string> missing;
    std::set<int> waiting;
    Done done;
    Clock::time_point deadline;
  };
  void complete(uint64_t id);

  const std::chrono::milliseconds timeout_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Pending> pending_;
};

}  // namespace weft::core
