// The submitter's side of placement groups and the public API: creating and removing groups
// through the head, a per-rank cache of the groups this rank targets (kept current by the
// head's pushes), and routing of tasks and actor creations to their bundle's rank. Calls for a
// group that is not created yet are parked here, on the loop thread, never blocking it.
#include <algorithm>
#include <chrono>

#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "sched/feasibility.hpp"
#include "weft/detail/registry.hpp"
#include "weft/errors.hpp"
#include "weft/placement_group.hpp"

namespace weft::core {
namespace {

using Clock = std::chrono::steady_clock;

EventLoop& loop() {
  EventLoop* l = current_loop();
  if (!l)
    throw Error("Weft is not running: call weft::run(argc, argv, driver) or create a "
                "weft::Runtime first");
  return *l;
}

std::string call_name(const PendingCall& c) {
  if (c.kind == PendingCall::Kind::kActorCreate) return "actor " + detail::class_name(c.fn_id);
  const detail::FunctionEntry* fe = detail::find_function(c.fn_id);
  return "task " + (fe ? fe->name : std::string("#") + std::to_string(c.fn_id));
}

std::string group_name(uint64_t id) { return "placement group " + std::to_string(id); }

// Blocks the calling (user) thread until `done(snapshot)` or the deadline. False on timeout.
template <class Pred>
bool wait_snapshot(EventLoop& l, uint64_t id, Pred done, Clock::time_point deadline) {
  PgRankState& st = l.pg_state();
  while (true) {
    uint32_t seen = l.completions().seq();
    {
      std::lock_guard<std::mutex> g(st.mu);
      auto it = st.snapshots.find(id);
      if (it != st.snapshots.end() && done(it->second)) return true;
    }
    if (Clock::now() >= deadline) return false;
    if (l.stopped()) throw Error("the Weft runtime stopped while this thread was waiting");
    l.completions().park(seen, std::min(deadline, Clock::now() + std::chrono::milliseconds(5)));
  }
}

void ensure_subscribed(EventLoop& l, uint64_t id) {
  {
    std::lock_guard<std::mutex> g(l.pg_state().mu);
    if (l.pg_state().snapshots.count(id)) return;
  }
  l.post([id](EventLoop& loop) { loop.pg_subscribe(id); });
}

}  // namespace

void set_placement(PendingCall& call, const detail::SubmitOptions& o) {
  if (o.placement_group != 0) {
    call.placement.pg = o.placement_group;
    call.placement.bundle = o.bundle_index;
    call.placement.capture = o.capture_child_tasks;
    return;
  }
  const ExecContext* parent = current_exec();
  if (parent && parent->placement && parent->placement->pg != 0 && parent->placement->capture) {
    call.placement.pg = parent->placement->pg;
    call.placement.bundle = -1;
    call.placement.capture = true;
  }
}

void EventLoop::pg_create(sched::PgSpec spec) {
  PgCacheEntry& e = pg_.cache[spec.id];
  e.subscribed = true;  // the head subscribes the creator
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(spec.id);
  w.put<uint8_t>(static_cast<uint8_t>(spec.strategy));
  w.put_str(spec.name);
  w.put<uint32_t>(static_cast<uint32_t>(spec.bundles.size()));
  for (const auto& x : spec.bundles) w.put_str(x.to_bytes());
  send(0, Msg::kPgCreate, b);
}

void EventLoop::pg_remove(uint64_t pg) {
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(pg);
  send(0, Msg::kPgRemove, b);
}

void EventLoop::pg_subscribe(uint64_t pg) {
  PgCacheEntry& e = pg_.cache[pg];
  if (e.subscribed) return;
  e.subscribed = true;
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(pg);
  send(0, Msg::kPgSubscribe, b);
}

void EventLoop::handle_pg_update(const char* data, size_t len) {
  WireReader r(data, len);
  apply_pg_update(r);
}

void EventLoop::handle_pg_reservations(const char* data, size_t len) {
  WireReader r(data, len);
  for (uint32_t n = r.get<uint32_t>(); n > 0; --n) apply_pg_update(r);
}

void EventLoop::apply_pg_update(WireReader& r) {
  uint64_t id = r.get<uint64_t>();
  if (r.get<uint8_t>() == 0) return;
  // Read whole before the cache changes: a message that does not decode changes nothing.
  const uint8_t state = r.get<uint8_t>();
  if (state > static_cast<uint8_t>(sched::PgState::kRemoved))
    throw SerializationError("placement group update with state " + std::to_string(state));
  std::string reason = r.get_str();
  std::vector<sched::ResourceSet> bundles(r.get_count(sizeof(uint32_t), "pg update bundles"));
  for (auto& x : bundles) x = sched::ResourceSet::from_bytes(r.get_str());
  std::vector<sched::BundleLocation> locations(
      r.get_count(5 * sizeof(int32_t), "pg update locations"));
  for (auto& l : locations) {
    l.bundle = r.get<int32_t>();
    l.rank = r.get<int32_t>();
    l.node = r.get<int32_t>();
    l.nvlink_domain = r.get<int32_t>();
    l.gpu_ids.resize(r.get_count(sizeof(int32_t), "pg update gpu ids"));
    for (auto& g : l.gpu_ids) g = r.get<int32_t>();
    if (l.rank < 0 || l.rank >= size_)
      throw SerializationError("placement group update names rank " + std::to_string(l.rank));
  }
  PgCacheEntry& e = pg_.cache[id];
  e.known = true;
  sched::PgState before = e.state;
  e.state = static_cast<sched::PgState>(state);
  e.reason = std::move(reason);
  e.bundles = std::move(bundles);
  e.locations = std::move(locations);
  // This submitter's dispatch view stops offering a created group's bundles to plain tasks,
  // and offers them again once it is gone.
  if ((before == sched::PgState::kCreated) != (e.state == sched::PgState::kCreated)) {
    const auto& locs = e.state == sched::PgState::kCreated ? e.locations : e.held;
    for (const auto& l : locs) {
      if (l.bundle < 0 || l.bundle >= static_cast<int>(e.bundles.size())) continue;
      const sched::ResourceSet& bundle = e.bundles[l.bundle];
      if (e.state == sched::PgState::kCreated)
        placer_.hold_bundle(l.rank, bundle);
      else
        placer_.free_bundle(l.rank, bundle);
    }
    e.held = e.state == sched::PgState::kCreated ? e.locations : std::vector<sched::BundleLocation>{};
  }
  if (!e.subscribed) {
    // Heard only because every rank learns reservations: nobody here waits on this group, so
    // no snapshot (a later wait() subscribes), and nothing is kept once it is gone.
    if (e.state == sched::PgState::kRemoved && e.parked.empty()) pg_.cache.erase(id);
    return;
  }
  {
    std::lock_guard<std::mutex> g(pg_.mu);
    pg_.snapshots[id] = PgSnapshot{e.state, e.reason, e.locations};
  }
  completions_.notify();
  if (e.state == sched::PgState::kPending || e.parked.empty()) return;
  std::vector<std::unique_ptr<PendingCall>> parked = std::move(e.parked);
  e.parked.clear();
  for (auto& c : parked) {
    if (c->kind == PendingCall::Kind::kActorCreate)
      dispatch_actor_create(std::move(c));
    else
      dispatch_task(std::move(c));
  }
}

void EventLoop::dispatch_pg_call(std::unique_ptr<PendingCall> call) {
  const uint64_t id = call->placement.pg;
  PgCacheEntry& e = pg_.cache[id];
  if (!e.known || e.state == sched::PgState::kPending) {
    pg_subscribe(id);
    e.parked.push_back(std::move(call));
    return;
  }
  detail::ErrorInfo err;
  err.kind = detail::ErrorKind::kInfeasible;
  err.rank = rank_;
  err.function = call->kind == PendingCall::Kind::kActorCreate ? detail::class_name(call->fn_id)
                                                                : "";
  if (const detail::FunctionEntry* fe = call->kind == PendingCall::Kind::kTask
                                            ? detail::find_function(call->fn_id)
                                            : nullptr)
    err.function = fe->name;
  if (e.state == sched::PgState::kInfeasible) {
    err.message = call_name(*call) + " targets " + group_name(id) +
                  ", which is INFEASIBLE: " + e.reason;
  } else if (e.state == sched::PgState::kRemoved) {
    err.message = call_name(*call) + " targets " + group_name(id) +
                  ", which was removed; create a new group for it";
  } else if (call->placement.bundle < -1) {
    err.message = call_name(*call) + ": bundle_index " + std::to_string(call->placement.bundle) +
                  " is invalid (use -1 for any bundle, or 0.." +
                  std::to_string(e.bundles.size() - 1) + ")";
  } else if (auto why = sched::check_fits_bundle(call->need, e.bundles, call->placement.bundle)) {
    // Ray leaves such a call pending forever (the "actor-CPU trap": an actor asking for a CPU
    // in a group whose bundles hold none); a batch job gets the reason at once.
    err.message = call_name(*call) + " needs " + call->need.str() + ", which fits no bundle of " +
                  group_name(id) + " it may use: " + why->message;
  } else {
    int b = call->placement.bundle;
    if (b < 0) {  // any bundle big enough; rotate so a group's work spreads over its bundles
      size_t n = e.bundles.size();
      for (size_t k = 0; k < n; ++k) {
        size_t i = (e.next + k) % n;
        if (call->need.fits_in(e.bundles[i])) {
          b = static_cast<int>(i);
          e.next = i + 1;
          break;
        }
      }
    }
    call->pg_target = e.locations.at(b).rank;
    if (call->kind == PendingCall::Kind::kActorCreate)
      dispatch_actor_create(std::move(call));
    else
      dispatch_task(std::move(call));
    return;
  }
  WEFT_LOG(Warn) << err.message;
  fail_call(*call, err);
}

}  // namespace weft::core

// --- the public API -------------------------------------------------------------------------
namespace weft {

using core::EventLoop;

const char* to_string(PlacementGroupState s) {
  return sched::pg_state_name(static_cast<sched::PgState>(s));
}

PlacementGroup placement_group(std::vector<std::map<std::string, double>> bundles,
                               Strategy strategy, PlacementGroupOptions options) {
  EventLoop& l = core::loop();
  if (bundles.empty()) throw Error("placement_group: a group needs at least one bundle");
  sched::PgSpec spec;
  spec.strategy = static_cast<sched::Strategy>(strategy);
  spec.name = std::move(options.name);
  for (size_t i = 0; i < bundles.size(); ++i) {
    sched::ResourceSet rs;
    for (const auto& [k, v] : bundles[i]) {
      if (k.empty() || v < 0)
        throw Error("placement_group: bundle " + std::to_string(i) + " has resource '" + k +
                    "' = " + std::to_string(v) + "; names must be non-empty and amounts ≥ 0");
      rs.set(k, v);
    }
    if (rs.empty())
      throw Error("placement_group: bundle " + std::to_string(i) + " asks for nothing");
    spec.bundles.push_back(std::move(rs));
  }
  // Ids are made here, not by the head, so creation needs no round trip.
  uint64_t seq;
  {
    std::lock_guard<std::mutex> g(l.pg_state().mu);
    seq = l.pg_state().next_seq++;
    spec.id = (static_cast<uint64_t>(l.rank()) << 40) | seq;
    l.pg_state().snapshots[spec.id] =
        core::PgSnapshot{sched::PgState::kPending, "the head has not answered yet", {}};
  }
  uint64_t id = spec.id;
  l.post([spec = std::move(spec)](EventLoop& loop) mutable { loop.pg_create(std::move(spec)); });
  return PlacementGroup(id);
}

void remove_placement_group(const PlacementGroup& pg) {
  if (!pg.valid()) throw Error("remove_placement_group: the handle refers to no group");
  EventLoop& l = core::loop();
  uint64_t id = pg.id();
  l.post([id](EventLoop& loop) {
    loop.pg_subscribe(id);
    loop.pg_remove(id);
  });
  // Returns once this rank has heard REMOVED, so state() right after says so.
  core::wait_snapshot(
      l, id, [](const core::PgSnapshot& s) { return s.state == sched::PgState::kRemoved; },
      core::Clock::now() + std::chrono::seconds(30));
}

void PlacementGroup::remove() const { remove_placement_group(*this); }

bool PlacementGroup::wait_for(std::chrono::nanoseconds timeout) const {
  if (!valid()) throw Error("PlacementGroup::wait on a handle that refers to no group");
  EventLoop& l = core::loop();
  core::ensure_subscribed(l, id_);
  auto deadline = timeout.count() < 0 ? core::Clock::time_point::max() : core::Clock::now() + timeout;
  bool decided = core::wait_snapshot(
      l, id_, [](const core::PgSnapshot& s) { return s.state != sched::PgState::kPending; },
      deadline);
  return decided && state().state == PlacementGroupState::Created;
}

PlacementGroupStatus PlacementGroup::state() const {
  if (!valid()) throw Error("PlacementGroup::state on a handle that refers to no group");
  EventLoop& l = core::loop();
  core::ensure_subscribed(l, id_);
  bool known = core::wait_snapshot(
      l, id_, [](const core::PgSnapshot&) { return true; },
      core::Clock::now() + std::chrono::seconds(10));
  if (!known)
    return {PlacementGroupState::Pending,
            "the head has not answered about placement group " + std::to_string(id_)};
  std::lock_guard<std::mutex> g(l.pg_state().mu);
  const core::PgSnapshot& s = l.pg_state().snapshots.at(id_);
  return {static_cast<PlacementGroupState>(s.state), s.reason};
}

std::vector<BundleInfo> PlacementGroup::bundles() const {
  state();  // makes sure this rank has heard from the head
  EventLoop& l = core::loop();
  std::lock_guard<std::mutex> g(l.pg_state().mu);
  std::vector<BundleInfo> out;
  auto it = l.pg_state().snapshots.find(id_);
  if (it == l.pg_state().snapshots.end()) return out;
  for (const auto& b : it->second.locations)
    out.push_back(BundleInfo{b.bundle, b.rank, b.node, b.gpu_ids, b.nvlink_domain});
  return out;
}

std::vector<int> assigned_gpus() {
  const core::ExecContext* ctx = core::current_exec();
  if (!ctx || !ctx->placement) return {};
  return ctx->placement->gpus;
}

}  // namespace weft
