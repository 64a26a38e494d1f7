// The head's placement-group manager: every group's state machine, the head's view of what
// bundles have reserved, and the two-phase reservation driven by messages. Pure data: rank 0's
// event loop feeds it requests and replies and sends the actions it returns, so the whole
// protocol (including crossing messages) is testable without MPI.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sched/cluster_view.hpp"
#include "sched/pg_planner.hpp"
#include "sched/placement_group.hpp"

namespace weft::head {

// One message the head must send to a rank.
struct PgAction {
  enum class Kind { kPrepare, kCommit, kRollback, kRelease };
  Kind kind = Kind::kPrepare;
  int rank = -1;
  uint64_t pg = 0;
  int bundle = -1;           // kPrepare
  sched::ResourceSet need;   // kPrepare
};

// What one call produced: actions to send, and groups whose state changed (their subscribers
// must hear the new state).
struct PgOutbox {
  std::vector<PgAction> actions;
  std::vector<uint64_t> changed;
};

class PgManager {
 public:
  explicit PgManager(std::vector<sched::RankInfo> ranks);

  // A new group: INFEASIBLE at once with the reason, PENDING with the reason, or prepares sent
  // to the ranks of the plan. `creator` is subscribed to its state. A second create of the same
  // id (a retried message) changes nothing.
  void create(sched::PgSpec spec, int creator, PgOutbox& out);
  // A rank's answer to a prepare. All bundles ok: commit on every rank, CREATED. Any not ok:
  // rollback on every rank of the plan, PENDING with the rank's reason, retried later.
  void on_prepared(uint64_t pg, int bundle, int rank, bool ok, const std::string& why,
                   std::vector<int> gpu_ids, PgOutbox& out);
  // Releases the group's bundles on their ranks and marks it REMOVED; then retries PENDING
  // groups, which may fit now. Removing an unknown or removed group is harmless.
  void remove(uint64_t pg, PgOutbox& out);
  // Resources were freed somewhere (a rank that refused a prepare says so once): re-plan every
  // PENDING group that is not already being prepared, oldest first.
  void retry_pending(PgOutbox& out);

  // `rank` wants every state change of `pg` (it may ask before the group exists).
  void subscribe(uint64_t pg, int rank);
  const std::set<int>& subscribers(uint64_t pg) const;
  const sched::PlacementGroup* find(uint64_t pg) const;
  size_t size() const { return groups_.size(); }
  // Each group, by id (weft status and weft list placement-groups).
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [id, g] : groups_) f(id, g.pg);
  }
  const sched::ClusterView& view() const { return view_; }

 private:
  struct Group {
    explicit Group(sched::PgSpec s) : pg(std::move(s)) {}
    sched::PlacementGroup pg;
    bool preparing = false;
    sched::PgPlan plan;                   // the plan being prepared / held
    std::vector<std::vector<int>> gpus;   // bundle → device ids, from prepare replies
    std::vector<bool> answered;
    int awaiting = 0;
    std::string refusal;                  // the first refusal of this attempt
  };
  void try_place(uint64_t id, Group& g, PgOutbox& out);
  void finish_attempt(uint64_t id, Group& g, PgOutbox& out);
  void release_plan(Group& g);

  sched::ClusterView view_;
  std::map<uint64_t, Group> groups_;
  std::map<uint64_t, std::set<int>> subscribers_;
  std::deque<uint64_t> pending_;  // PENDING groups, oldest first
};

}  // namespace weft::head
