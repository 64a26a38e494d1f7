#include "head/pg_manager.hpp"

#include <algorithm>

namespace weft::head {

using sched::PgPlan;
using sched::PgState;

PgManager::PgManager(std::vector<sched::RankInfo> ranks) : view_(std::move(ranks)) {}

void PgManager::subscribe(uint64_t pg, int rank) { subscribers_[pg].insert(rank); }

const std::set<int>& PgManager::subscribers(uint64_t pg) const {
  static const std::set<int> kNone;
  auto it = subscribers_.find(pg);
  return it == subscribers_.end() ? kNone : it->second;
}

const sched::PlacementGroup* PgManager::find(uint64_t pg) const {
  auto it = groups_.find(pg);
  return it == groups_.end() ? nullptr : &it->second.pg;
}

void PgManager::create(sched::PgSpec spec, int creator, PgOutbox& out) {
  uint64_t id = spec.id;
  subscribe(id, creator);
  if (groups_.count(id)) return;
  Group& g = groups_.emplace(id, Group(std::move(spec))).first->second;
  try_place(id, g, out);
  // Subscribers that asked before the group existed learn its first state now.
  out.changed.push_back(id);
}

void PgManager::try_place(uint64_t id, Group& g, PgOutbox& out) {
  const sched::PgSpec& spec = g.pg.spec();
  PgPlan plan = sched::plan_placement_group(spec, view_);
  if (plan.outcome == PgPlan::Outcome::kInfeasible) {
    g.pg.mark_infeasible(plan.reason);
    return;
  }
  if (!plan.placed()) {
    g.pg.mark_pending(plan.reason);
    if (std::find(pending_.begin(), pending_.end(), id) == pending_.end()) pending_.push_back(id);
    return;
  }
  // Book the bundles in the head's view now, so that groups planned while this one is being
  // prepared do not count on the same resources; a refusal gives them back.
  for (size_t b = 0; b < spec.bundles.size(); ++b) view_.allocate(plan.ranks[b], spec.bundles[b]);
  g.plan = std::move(plan);
  g.preparing = true;
  g.awaiting = static_cast<int>(spec.bundles.size());
  g.answered.assign(spec.bundles.size(), false);
  g.gpus.assign(spec.bundles.size(), {});
  g.refusal.clear();
  for (size_t b = 0; b < spec.bundles.size(); ++b) {
    out.actions.push_back(PgAction{PgAction::Kind::kPrepare, g.plan.ranks[b], id,
                                   static_cast<int>(b), spec.bundles[b]});
  }
}

void PgManager::release_plan(Group& g) {
  const auto& bundles = g.pg.spec().bundles;
  for (size_t b = 0; b < g.plan.ranks.size() && b < bundles.size(); ++b)
    view_.release(g.plan.ranks[b], bundles[b]);
  g.plan = PgPlan{};
}

void PgManager::on_prepared(uint64_t pg, int bundle, int rank, bool ok, const std::string& why,
                            std::vector<int> gpu_ids, PgOutbox& out) {
  auto it = groups_.find(pg);
  if (it == groups_.end()) return;
  Group& g = it->second;
  // A reply for a removed group (the remove overtook the prepare) needs nothing: the release
  // the head sent after the prepare frees whatever the rank reserved.
  if (!g.preparing || bundle < 0 || bundle >= static_cast<int>(g.answered.size()) ||
      g.answered[bundle] || g.plan.ranks[bundle] != rank)
    return;
  g.answered[bundle] = true;
  --g.awaiting;
  if (ok) {
    g.gpus[bundle] = std::move(gpu_ids);
  } else if (g.refusal.empty()) {
    g.refusal = "bundle " + std::to_string(bundle) + " could not be reserved: " + why;
  }
  if (g.awaiting == 0) finish_attempt(pg, g, out);
}

void PgManager::finish_attempt(uint64_t id, Group& g, PgOutbox& out) {
  g.preparing = false;
  std::set<int> ranks(g.plan.ranks.begin(), g.plan.ranks.end());
  if (g.refusal.empty()) {
    for (int r : ranks) out.actions.push_back(PgAction{PgAction::Kind::kCommit, r, id, -1, {}});
    g.pg.mark_created(sched::locate_bundles(g.plan, view_, g.gpus));
    out.changed.push_back(id);
    return;
  }
  for (int r : ranks) out.actions.push_back(PgAction{PgAction::Kind::kRollback, r, id, -1, {}});
  release_plan(g);
  g.pg.mark_pending(g.refusal);
  if (std::find(pending_.begin(), pending_.end(), id) == pending_.end()) pending_.push_back(id);
  out.changed.push_back(id);
}

void PgManager::remove(uint64_t pg, PgOutbox& out) {
  auto it = groups_.find(pg);
  if (it == groups_.end() || it->second.pg.state() == PgState::kRemoved) return;
  Group& g = it->second;
  std::set<int> ranks(g.plan.ranks.begin(), g.plan.ranks.end());
  for (int r : ranks) out.actions.push_back(PgAction{PgAction::Kind::kRelease, r, pg, -1, {}});
  if (!g.plan.ranks.empty()) release_plan(g);
  g.preparing = false;
  g.pg.mark_removed();
  pending_.erase(std::remove(pending_.begin(), pending_.end(), pg), pending_.end());
  out.changed.push_back(pg);
  if (!ranks.empty()) retry_pending(out);
}

void PgManager::retry_pending(PgOutbox& out) {
  std::deque<uint64_t> todo;
  todo.swap(pending_);
  for (uint64_t id : todo) {
    auto it = groups_.find(id);
    if (it == groups_.end() || it->second.pg.state() != PgState::kPending) continue;
    Group& g = it->second;
    if (g.preparing) {
      pending_.push_back(id);
      continue;
    }
    std::string before = g.pg.reason();
    try_place(id, g, out);
    if (g.preparing || g.pg.state() != PgState::kPending || g.pg.reason() != before)
      out.changed.push_back(id);
  }
}

}  // namespace weft::head
