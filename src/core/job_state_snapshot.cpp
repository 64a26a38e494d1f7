// EventLoop::job_snapshot: this rank's part of the job's state, as JSON for the control socket
// — its gate's resources and queue, every pending item it holds with the reason it waits, the
// tasks it submitted (and where they went), its actors, the objects it knows, its metrics and,
// when asked, its timeline. Rank 0's part also carries the job-wide sections (ranks, nodes and
// hosts, placement groups). Rank 0 merges the parts of every rank (state_gather.hpp) into what
// `weft status`, `list`, `metrics` and `timeline` show. Runs on the loop, so it reads loop state
// without locks.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "core/event_loop.hpp"
#include "core/inline_budget.hpp"
#include "core/invoke.hpp"
#include "core/object_store_client.hpp"
#include "core/state_gather.hpp"
#include "common/recycled_bytes.hpp"
#include "common/timeline.hpp"
#include "weft/detail/registry.hpp"

namespace weft::core {
namespace {

using nlohmann::json;

json resources(const sched::ResourceSet& s) {
  json out = json::object();
  for (const auto& [name, units] : s) out[name] = sched::ResourceSet::to_double(units);
  return out;
}

std::string function_label(uint64_t fn_id, const std::string& name) {
  const detail::FunctionEntry* fe = detail::find_function(fn_id);
  return task_label(fe ? fe->name : "function #" + std::to_string(fn_id), name);
}

std::string class_label(uint64_t class_id) {
  const detail::ClassEntry* ce = detail::find_class(class_id);
  return ce ? ce->name : "class #" + std::to_string(class_id);
}

const char* status_name(detail::ObjectStatus s) {
  switch (s) {
    case detail::ObjectStatus::kPending:
      return "pending";
    case detail::ObjectStatus::kReady:
      return "ready";
    case detail::ObjectStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

// Why an item in a gate's queue cannot start: the first resource it needs more of than is free.
json resource_reason(const sched::ResourceSet& need, const sched::ResourceSet& total,
                     const sched::ResourceSet& used, int rank) {
  for (const auto& [name, units] : need) {
    const int64_t free = total.units(name) - used.units(name);
    if (units > free) {
      const double n = sched::ResourceSet::to_double(units);
      const double f = sched::ResourceSet::to_double(free);
      const double t = sched::ResourceSet::to_double(total.units(name));
      char text[256];
      std::snprintf(text, sizeof text,
                    "waiting for resource %s: needs %g, %g of %g free on rank %d",
                    name.str().c_str(), n, f, t, rank);
      return {{"reason", "resource"}, {"resource", name.str()}, {"need", n}, {"free", f},
              {"total", t},           {"text", text}};
    }
  }
  // Everything fits on its own: it waits behind earlier work of its level (the gate's order).
  return {{"reason", "queue"},
          {"text", "queued behind earlier work on rank " + std::to_string(rank)}};
}

}  // namespace

void EventLoop::add_placement_groups(nlohmann::json& j) const {
  // --- placement groups: the head's table (rank 0) ---
  json groups = json::array();
  auto add_group = [&](uint64_t id, const std::string& name, sched::PgState st,
                       const std::string& reason, const std::vector<sched::ResourceSet>& bundles,
                       const std::vector<sched::BundleLocation>& locs) {
    json b = json::array();
    for (const auto& r : bundles) b.push_back(resources(r));
    json l = json::array();
    for (const auto& x : locs)
      l.push_back({{"bundle", x.bundle}, {"rank", x.rank}, {"node", x.node}});
    groups.push_back({{"id", id},
                      {"name", name},
                      {"state", sched::pg_state_name(st)},
                      {"reason", reason},
                      {"bundles", std::move(b)},
                      {"locations", std::move(l)}});
  };
  if (pg_.head) {
    pg_.head->for_each([&](uint64_t id, const sched::PlacementGroup& g) {
      add_group(id, g.spec().name, g.state(), g.reason(), g.spec().bundles, g.locations());
    });
  }
  j["placement_groups"] = std::move(groups);

}

void EventLoop::add_job_sections(nlohmann::json& j) const {
  // --- ranks, nodes, hosts ---
  json ranks = json::array(), nodes = json::array();
  std::vector<json> node_json;
  for (int r = 0; r < size_; ++r) {
    const int node = topo_.node_of_rank[r];
    const std::string host =
        r < static_cast<int>(topo_.host_names.size()) ? topo_.host_names[r] : "";
    json jr = {{"rank", r},
               {"node", node},
               {"host", host},
               {"state", known_failed(r) ? "dead" : "alive"},
               {"total", resources(view_.info(r).total)}};
    ranks.push_back(std::move(jr));
    if (node >= static_cast<int>(node_json.size())) node_json.resize(node + 1);
    json& jn = node_json[node];
    if (jn.is_null()) jn = {{"node", node}, {"host", host}, {"ranks", json::array()}};
    jn["ranks"].push_back(r);
  }
  for (size_t n = 0; n < node_json.size(); ++n) {
    if (node_json[n].is_null()) continue;
    sched::ResourceSet total;
    for (int r : node_json[n]["ranks"]) total += view_.info(r).total;
    node_json[n]["total"] = resources(total);
    nodes.push_back(std::move(node_json[n]));
  }
  std::set<std::string> hosts(topo_.host_names.begin(), topo_.host_names.end());
  j["job"] = {{"ranks", size_},
              {"nodes", topo_.num_nodes},
              {"hosts", json(std::vector<std::string>(hosts.begin(), hosts.end()))},
              {"job_id", topo_.job_id}};
  j["ranks"] = std::move(ranks);
  j["nodes"] = std::move(nodes);

  add_placement_groups(j);
}

nlohmann::json EventLoop::job_snapshot(uint8_t want) {
  json j;
  j["rank"] = rank_;
  j["host"] = rank_ < static_cast<int>(topo_.host_names.size()) ? topo_.host_names[rank_] : "";
  j["total"] = resources(gate_.total());
  j["used"] = resources(gate_.used());
  j["queued"] = gate_.queued();
  if (rank_ == 0) add_job_sections(j);
  // --- tasks ---
  size_t on_others = 0;
  for (const auto& [id, f] : inflight_) on_others += f.rank != rank_;
  j["tasks"] = {{"submitted", ops_.tasks_submitted},     {"finished", ops_.tasks_finished},
                {"failed", ops_.tasks_failed},           {"infeasible", ops_.tasks_infeasible},
                {"in_flight", inflight_.size()},         {"in_flight_on_other_ranks", on_others},
                {"waiting_for_arguments", deps_.held()}, {"queued_here", gate_.queued()}};

  // --- pending items, each with its reason ---
  json pending = json::array();
  deps_.for_each_held([&](const PendingCall& c, const std::vector<ObjectId>& missing) {
    json args = json::array();
    for (const ObjectId& id : missing) {
      json a = {{"object", id.str()}};
      if (std::string p = describe_producer(id); !p.empty()) a["producer"] = p;
      args.push_back(std::move(a));
    }
    const char* kind = c.kind == PendingCall::Kind::kTask        ? "task"
                       : c.kind == PendingCall::Kind::kActorCall ? "actor_call"
                                                                 : "actor";
    std::string what = c.kind == PendingCall::Kind::kActorCreate ? "actor " + class_label(c.fn_id)
                                                                 : function_label(c.fn_id, c.name);
    pending.push_back({{"kind", kind},
                       {"what", what},
                       {"where", "submitter of rank " + std::to_string(rank_)},
                       {"reason", "arguments"},
                       {"text", "waiting for " + std::to_string(missing.size()) + " argument(s)"},
                       {"arguments", std::move(args)}});
  });
  // Actor calls ready before an earlier call of this caller to the same actor: they leave in
  // order (CallerSeq), so they wait here behind it.
  for (const auto& [actor, cs] : call_seq_) {
    for (const auto& [seq, c] : cs.early) {
      pending.push_back(
          {{"kind", "actor_call"},
           {"what", function_label(c->fn_id, c->name)},
           {"where", "submitter of rank " + std::to_string(rank_)},
           {"reason", "order"},
           {"text", "waiting behind position " + std::to_string(cs.ready_next) +
                        " of this caller's calls to " + actor.str() +
                        " (calls leave in order; that one waits for its arguments)"}});
    }
  }
  gate_.for_each_queued([&](const ExecItem& i) {
    json p = i.rare->placement.pg != 0
                 ? json{{"reason", "group_bundle"},
                        {"group", i.rare->placement.pg},
                        {"text", "waiting for room in bundle " +
                                     std::to_string(i.rare->placement.bundle) +
                                     " of placement group " + std::to_string(i.rare->placement.pg)}}
                 : resource_reason(i.need, gate_.total(), gate_.used(), rank_);
    const bool task = i.kind == ExecItem::Kind::kTask;
    p["kind"] = task ? "task" : "actor";
    p["what"] = task ? function_label(i.fn_id, i.rare->name) : "actor " + class_label(i.fn_id);
    p["where"] = "gate of rank " + std::to_string(rank_);
    p["gate_rank"] = rank_;
    p["need"] = resources(i.need);
    if (task) p["object"] = i.ret.str();
    pending.push_back(std::move(p));
  });
  for (const auto& [pg, e] : pg_.cache) {
    for (const auto& c : e.parked) {
      pending.push_back(
          {{"kind", c->kind == PendingCall::Kind::kTask ? "task" : "actor"},
           {"what", c->kind == PendingCall::Kind::kActorCreate ? "actor " + class_label(c->fn_id)
                                                               : function_label(c->fn_id, c->name)},
           {"where", "submitter of rank " + std::to_string(rank_)},
           {"reason", "group"},
           {"group", pg},
           {"text", "waiting for placement group " + std::to_string(pg) + " (" +
                        sched::pg_state_name(e.state) + (e.reason.empty() ? "" : ": " + e.reason) +
                        ")"}});
    }
  }
  // Tasks this rank submitted and awaits, with the rank they went to: the merge (state_gather)
  // finds each in that rank's gate queue, or running there.
  for (const auto& [id, f] : inflight_) {
    pending.push_back({{"kind", "task"},
                       {"what", function_label(f.fn_id, f.name)},
                       {"object", id.str()},
                       {"target", f.rank},
                       {"where", "rank " + std::to_string(f.rank)},
                       {"reason", known_failed(f.rank) ? "rank_dead" : "sent"},
                       {"text", known_failed(f.rank)
                                    ? "sent to rank " + std::to_string(f.rank) + ", which is dead"
                                    : "sent to rank " + std::to_string(f.rank)}});
  }
  j["pending"] = std::move(pending);
  json infeasible = json::array();
  for (const auto& i : ops_.infeasible) infeasible.push_back({{"what", i.what}, {"reason", i.why}});
  j["infeasible"] = std::move(infeasible);

  // --- actors hosted here, and those this rank created ---
  json actors = json::array();
  for (const auto& [id, a] : actors_) {
    const char* st = a->state == ActorInstance::State::kAlive      ? "alive"
                     : a->state == ActorInstance::State::kCreating ? "creating"
                                                                   : "dead";
    actors.push_back({{"id", id.str()},
                      {"class", class_label(a->class_id)},
                      {"name", a->name},
                      {"rank", rank_},
                      {"state", st},
                      {"running", a->running},
                      {"queued", a->ready.size()},
                      {"death", a->death}});
  }
  j["actors"] = std::move(actors);

  // --- objects this rank knows (owns or borrows); not for "metrics" ---
  if (want & kWantObjects) {
    json objects = json::array();
    for (const StatePtr& s : objects_.collect([](const detail::ObjectState&) { return true; })) {
      json o = {{"id", s->id.str()}, {"owner", s->id.owner}, {"status", status_name(s->status())}};
      if (s->done() && s->payload) {
        o["size"] = s->payload->size();
        if (auto* sp = dynamic_cast<const StorePayload*>(s->payload.get())) {
          o["where"] = "store";
          o["locations"] = json::array({sp->holder()});
          o["pinned_here"] = sp->pinned();
          // The copy in this rank's node store: in memory or spilled, and its pins.
          if (ObjectStoreClient* c = store_client()) {
            const store::ObjectPlace place = c->store().info(s->id);
            if (std::string(place.where) != "absent") {
              o["store"] = {{"node", topo_.node},
                            {"where", place.where},
                            {"primary", place.primary},
                            {"spilled", std::string(place.where) == "spilled"},
                            {"spill_copy", place.spill_copy},
                            {"pins", place.pins}};
            }
          }
        } else {
          o["where"] = "inline";
          o["locations"] = json::array({s->id.owner});
        }
      }
      if (s->status() == detail::ObjectStatus::kFailed) o["error"] = s->error().message;
      objects.push_back(std::move(o));
    }
    j["objects"] = std::move(objects);
  }

  // --- figures for weft metrics ---
  const net::TransportStats ts = transport_.stats();
  json m = {{"messages_sent", ts.messages_sent},     {"messages_delivered", ts.messages_delivered},
            {"queued_messages", ts.queued_messages}, {"mpi_bulk_bytes", ts.mpi_bulk_bytes},
            {"actors_hosted", actors_.size()},       {"inline_owned_bytes", inline_budget().used()},
            {"objects_known", objects_.size()},      {"recycled_bytes", recycled_bytes()}};
  if (ObjectStoreClient* c = store_client()) {
    const store::StoreStats st = c->store().stats();
    m["store"] = {{"node", topo_.node},
                  {"capacity_bytes", st.capacity},
                  {"used_bytes", st.used},
                  {"primary_bytes", st.primary_bytes},
                  {"secondary_bytes", st.secondary_bytes},
                  {"spilled_bytes", st.spilled_bytes},
                  {"spilled_objects", st.spilled_objects},
                  {"fallback_bytes", st.fallback_bytes},
                  {"objects", st.num_objects},
                  {"evictions", st.evictions},
                  {"spills", st.spills},
                  {"restores", st.restores}};
  }
  j["metrics"] = std::move(m);
  if (want & kWantTimeline) j["timeline"] = timeline_part();
  return j;
}

}  // namespace weft::core
