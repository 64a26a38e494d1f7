// Placement groups: a list of bundles (resource sets) reserved together under a strategy, and
// the life of one group as a state machine. The head's placement-group manager keeps one
// PlacementGroup per group; pg_planner decides where bundles go and pg_ledger reserves them on
// each rank (two-phase).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/resource_set.hpp"

namespace weft::sched {

enum class Strategy { kPack, kSpread, kStrictPack, kStrictSpread, kNvlinkDomain };
const char* strategy_name(Strategy s);  // "PACK", "STRICT_PACK", ...

struct PgSpec {
  uint64_t id = 0;
  std::vector<ResourceSet> bundles;
  Strategy strategy = Strategy::kPack;
  std::string name;  // optional, for messages and `weft list placement-groups`
};

enum class PgState { kPending, kCreated, kInfeasible, kRemoved };
const char* pg_state_name(PgState s);

// Where one bundle lives: the query result users and `weft list` see.
struct BundleLocation {
  int bundle = -1;
  int rank = -1;
  int node = -1;  // node id
  std::vector<int> gpu_ids;
  int nvlink_domain = -1;
  friend bool operator==(const BundleLocation&, const BundleLocation&) = default;
};

// PENDING(reason) → CREATED | INFEASIBLE(reason) | REMOVED; CREATED → PENDING (a rank holding a
// bundle died: the group is rescheduled) | REMOVED; INFEASIBLE → REMOVED. REMOVED is final.
// Transitions return false, and change nothing, when not allowed: with messages crossing,
// "remove" may reach a group twice and must be harmless.
class PlacementGroup {
 public:
  explicit PlacementGroup(PgSpec spec, std::string reason = "waiting for the first placement")
      : spec_(std::move(spec)), reason_(std::move(reason)) {}

  const PgSpec& spec() const { return spec_; }
  PgState state() const { return state_; }
  const std::string& reason() const { return reason_; }  // why PENDING / INFEASIBLE
  const std::vector<BundleLocation>& locations() const { return locations_; }
  // "placement group 7 (name) STRICT_PACK: PENDING: bundle 3 needs ..."
  std::string describe() const;

  bool mark_pending(std::string reason);
  bool mark_created(std::vector<BundleLocation> locations);
  bool mark_infeasible(std::string reason);
  bool mark_removed();

 private:
  PgSpec spec_;
  PgState state_ = PgState::kPending;
  std::string reason_;
  std::vector<BundleLocation> locations_;
};

}  // namespace weft::sched
