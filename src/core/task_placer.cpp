#include "core/task_placer.hpp"

#include <algorithm>

#include "sched/feasibility.hpp"
#include "sched/policy.hpp"

namespace weft::core {

TaskPlacer::TaskPlacer(const sched::ClusterView& view, int rank)
    : view_(view),
      rank_(rank),
      size_(view.size()),
      slots_(view),
      load_(view.size(), 0),
      reserved_(view.size()),
      fallback_logged_(view.num_nodes()) {}

std::optional<std::string> TaskPlacer::affinity_infeasible(const sched::ResourceSet& need,
                                                           const Strategy& st) const {
  if (!st.hard_affinity()) return std::nullopt;
  auto why = sched::check_feasible_on_node(need, view_, st.node);
  if (!why) return std::nullopt;
  return why->message;
}

TaskPlacer::Placed TaskPlacer::place(const sched::ResourceSet& need, const Strategy& st,
                                     std::vector<std::pair<int, uint64_t>> arg_bytes_by_rank,
                                     const FailedRanks& failed) {
  Placed out;
  if (auto why = affinity_infeasible(need, st)) {  // a hard affinity names its node first
    out.why = std::move(*why);
    return out;
  }
  if (!feasible_need_ || *feasible_need_ != need) {
    if (auto why = sched::check_feasible(need, view_)) {
      out.why = why->message;
      return out;
    }
    feasible_need_ = need;
  }
  int target = -1;
  if (st.policy == sched::Policy::kDefault && arg_bytes_by_rank.empty() &&
      slots_.fits_now(rank_, need)) {
    // The default strategy's first choice without stored arguments, and most tasks' placement:
    // this rank, which has a slot free (sched::pick_rank would answer the same, after building
    // the request and its dense demand).
    target = rank_;
  } else {
    sched::TaskRequest req;
    req.need = need;
    req.policy = st.policy;
    req.node = st.node;
    req.soft = st.soft;
    req.arg_bytes_by_rank = std::move(arg_bytes_by_rank);
    // A slot free now, as far as this submitter knows. A failed rank's slots are never free: the
    // first pick that meets one takes them out of the view, and picks again.
    target = sched::pick_rank(req, slots_, rank_);
    for (int tries = 0; target >= 0 && failed.contains(target) && tries < size_; ++tries) {
      slots_.set_available(target, {});
      target = sched::pick_rank(req, slots_, rank_);
    }
    if (target >= 0 && failed.contains(target)) target = -1;
  }
  // Free units never exceed the total, so a slot free in the view fits the total; only a
  // reservation beside it can refuse it.
  if (target >= 0 && (reserved_[target].empty() ||
                      need.fits_beside(reserved_[target], view_.info(target).total))) {
    slots_.allocate(target, need);
    out.reserved = true;
  } else {
    target = overflow_rank(need, st, failed);
    if (target < 0) {
      out.why = "every rank that could run it (" + need.str() + ") has failed";
      return out;
    }
  }
  if (st.policy == sched::Policy::kNodeAffinity && st.soft && view_.info(target).node != st.node)
    out.fallback = fallback_note(st, target);
  out.rank = target;
  ++load_[target];
  return out;
}

std::string TaskPlacer::fallback_note(const Strategy& st, int target) {
  const int n = view_.node_index(st.node);
  if (!fallback_logged_.first(st.node, n)) return {};
  const char* why = n < 0 ? "which this job does not have" : "which has no room for it now";
  return "soft node affinity: a task asked for node " + std::to_string(st.node) + ", " + why +
         "; it runs on rank " + std::to_string(target) + " of node " +
         std::to_string(view_.info(target).node) + " (logged once per node)";
}

int TaskPlacer::overflow_rank(const sched::ResourceSet& need, const Strategy& st,
                              const FailedRanks& failed, int avoid) const {
  if (avoid >= 0) {
    const int target = least_loaded_fit(need, st, failed, avoid);
    if (target >= 0) return target;
  }
  return least_loaded_fit(need, st, failed, -1);
}

int TaskPlacer::least_loaded_fit(const sched::ResourceSet& need, const Strategy& st,
                                 const FailedRanks& failed, int skip) const {
  // Every allowed rank is as busy as this submitter knows. The task goes to the least loaded
  // rank that can ever run it; that rank's gate queues it, and an idle rank may steal it there.
  const int node_index = st.hard_affinity() ? view_.node_index(st.node) : -1;
  auto allowed = [&](int r) {
    return r != skip && !failed.contains(r) && (node_index < 0 || view_.node_of(r) == node_index);
  };
  int target = -1;
  double best_load = 0;
  for (int i = 0; i < size_; ++i) {
    const int r = (rank_ + i) % size_;
    const auto& total = view_.info(r).total;
    if (!allowed(r) || !need.fits_in(total)) continue;
    // Prefer ranks where it fits beside the reservations; others only when none does.
    if (!need.fits_beside(reserved_[r], total)) continue;
    const double load = load_[r] / std::max(1.0, total.get(sched::ResourceName::cpu()));
    if (target < 0 || load < best_load) {
      target = r;
      best_load = load;
    }
  }
  if (target >= 0) return target;
  // It fits nowhere beside today's reservations: queue at a rank where it fits in the total
  // (a reservation may go away); its gate holds it until then.
  for (int i = 0; i < size_ && target < 0; ++i) {
    const int r = (rank_ + i) % size_;
    if (allowed(r) && need.fits_in(view_.info(r).total)) target = r;
  }
  return target;
}

void TaskPlacer::moved(int from, int to, const sched::ResourceSet& need, bool* reserved,
                       bool take_free_slot) {
  if (*reserved) slots_.release(from, need);
  *reserved = take_free_slot && slots_.fits_now(to, need);
  if (*reserved) slots_.allocate(to, need);
  --load_[from];
  ++load_[to];
}

void TaskPlacer::finished(int rank, const sched::ResourceSet& need, bool reserved) {
  if (reserved) slots_.release(rank, need);
  --load_[rank];
}

void TaskPlacer::hold_bundle(int rank, const sched::ResourceSet& bundle) {
  slots_.allocate(rank, bundle);
  reserved_[rank] += bundle;
}

void TaskPlacer::free_bundle(int rank, const sched::ResourceSet& bundle) {
  slots_.release(rank, bundle);
  reserved_[rank] -= bundle;
}

}  // namespace weft::core
