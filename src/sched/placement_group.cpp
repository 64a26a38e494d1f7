#include "sched/placement_group.hpp"

namespace weft::sched {

const char* strategy_name(Strategy s) {
  switch (s) {
    case Strategy::kPack:
      return "PACK";
    case Strategy::kSpread:
      return "SPREAD";
    case Strategy::kStrictPack:
      return "STRICT_PACK";
    case Strategy::kStrictSpread:
      return "STRICT_SPREAD";
    case Strategy::kNvlinkDomain:
      return "NVLINK_DOMAIN";
  }
  return "?";
}

const char* pg_state_name(PgState s) {
  switch (s) {
    case PgState::kPending:
      return "PENDING";
    case PgState::kCreated:
      return "CREATED";
    case PgState::kInfeasible:
      return "INFEASIBLE";
    case PgState::kRemoved:
      return "REMOVED";
  }
  return "?";
}

std::string PlacementGroup::describe() const {
  std::string s = "placement group " + std::to_string(spec_.id);
  if (!spec_.name.empty()) s += " (" + spec_.name + ")";
  s += std::string(" ") + strategy_name(spec_.strategy) + ": " + pg_state_name(state_);
  if ((state_ == PgState::kPending || state_ == PgState::kInfeasible) && !reason_.empty()) {
    s += ": " + reason_;
  }
  return s;
}

bool PlacementGroup::mark_pending(std::string reason) {
  if (state_ != PgState::kPending && state_ != PgState::kCreated) return false;
  state_ = PgState::kPending;
  reason_ = std::move(reason);
  locations_.clear();
  return true;
}

bool PlacementGroup::mark_created(std::vector<BundleLocation> locations) {
  if (state_ != PgState::kPending || locations.size() != spec_.bundles.size()) return false;
  state_ = PgState::kCreated;
  reason_.clear();
  locations_ = std::move(locations);
  return true;
}

bool PlacementGroup::mark_infeasible(std::string reason) {
  if (state_ != PgState::kPending) return false;
  state_ = PgState::kInfeasible;
  reason_ = std::move(reason);
  return true;
}

bool PlacementGroup::mark_removed() {
  if (state_ == PgState::kRemoved) return false;
  state_ = PgState::kRemoved;
  locations_.clear();
  return true;
}

}  // namespace weft::sched
