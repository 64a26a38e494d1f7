#include "core/state_gather.hpp"

#include <utility>

namespace weft::core {
namespace {

using nlohmann::json;

const char* kCounters[] = {"submitted", "finished", "failed", "infeasible", "in_flight",
                           "in_flight_on_other_ranks", "waiting_for_arguments", "queued_here"};

// The object ids each rank's gate queues: a task sent there and not queued is running.
std::map<int, std::set<std::string>> queued_objects(const std::map<int, json>& parts) {
  std::map<int, std::set<std::string>> q;
  for (const auto& [r, part] : parts) {
    auto& ids = q[r];
    for (const auto& p : part.value("pending", json::array()))
      if (p.value("reason", "") != "sent" && p.contains("object") && p.contains("gate_rank"))
        ids.insert(p["object"].get<std::string>());
  }
  return q;
}

}  // namespace

json merge_parts(const json& own, const std::map<int, json>& parts,
                 const std::map<int, std::string>& missing) {
  json out;
  out["rank"] = own.value("rank", 0);
  for (const char* k : {"job", "nodes", "placement_groups"}) out[k] = own.value(k, json());

  // --- ranks: totals and states from rank 0, the rest from each rank's own part ---
  json ranks = own.value("ranks", json::array());
  for (json& jr : ranks) {
    const int r = jr.value("rank", -1);
    if (auto it = parts.find(r); it != parts.end()) {
      jr["answered"] = true;
      jr["used"] = it->second.value("used", json::object());
      jr["queued"] = it->second.value("queued", 0);
      jr["running"] = 0;
      jr["submitted"] = it->second.value("tasks", json::object()).value("submitted", 0);
    } else {
      jr["answered"] = false;
      auto m = missing.find(r);
      jr["missing"] = m != missing.end() ? m->second : std::string("not asked");
    }
  }

  // --- task counters, summed over the ranks that answered ---
  json tasks = json::object();
  for (const char* k : kCounters) tasks[k] = 0;
  json by_rank = json::array();
  for (const auto& [r, part] : parts) {
    const json t = part.value("tasks", json::object());
    for (const char* k : kCounters) tasks[k] = tasks[k].get<uint64_t>() + t.value(k, uint64_t{0});
    json one = t;
    one["rank"] = r;
    by_rank.push_back(std::move(one));
  }
  tasks["by_rank"] = std::move(by_rank);

  // --- pending and running: a task sent to a rank that answered is in its gate's queue
  // (listed there, with the reason) or running there ---
  const auto queued = queued_objects(parts);
  json pending = json::array(), running = json::array();
  std::map<int, int> running_on;
  for (const auto& [r, part] : parts) {
    for (json p : part.value("pending", json::array())) {
      if (p.value("reason", "") != "sent") {
        pending.push_back(std::move(p));
        continue;
      }
      const int target = p.value("target", -1);
      const std::string obj = p.value("object", "");
      if (parts.count(target)) {
        if (queued.at(target).count(obj)) continue;  // the target's gate lists it
        p["reason"] = "running";
        p["where"] = "rank " + std::to_string(target);
        p["text"] = "running on rank " + std::to_string(target) + " (submitted by rank " +
                    std::to_string(r) + ")";
        ++running_on[target];
        running.push_back(std::move(p));
        continue;
      }
      auto m = missing.find(target);
      p["text"] = "sent to rank " + std::to_string(target) + ", which did not answer (" +
                  (m != missing.end() ? m->second : std::string("not asked")) + ")";
      pending.push_back(std::move(p));
    }
  }
  for (json& jr : ranks)
    if (jr.value("answered", false)) jr["running"] = running_on[jr.value("rank", -1)];
  out["ranks"] = std::move(ranks);
  out["tasks"] = std::move(tasks);
  out["pending"] = std::move(pending);
  out["running"] = std::move(running);

  // --- infeasible requests and actors, every rank's ---
  json infeasible = json::array(), actors = json::array();
  for (const auto& [r, part] : parts) {
    for (json i : part.value("infeasible", json::array())) {
      i["rank"] = r;
      infeasible.push_back(std::move(i));
    }
    for (const auto& a : part.value("actors", json::array())) actors.push_back(a);
  }
  out["infeasible"] = std::move(infeasible);
  out["actors"] = std::move(actors);

  // --- objects: one row per id, the owner's record first, with every rank that knows it ---
  bool any_objects = false;
  std::map<std::string, json> objects;
  for (const auto& [r, part] : parts) {
    if (!part.contains("objects")) continue;
    any_objects = true;
    for (const auto& o : part["objects"]) {
      const std::string id = o.value("id", "");
      json& row = objects[id];
      const bool owner_record = o.value("owner", -1) == r;
      json known = row.is_null() ? json::array() : row["known_by"];
      if (row.is_null() || owner_record) row = o;
      known.push_back(r);
      row["known_by"] = std::move(known);
    }
  }
  if (any_objects) {
    json list = json::array();
    for (auto& [id, row] : objects) list.push_back(std::move(row));
    out["objects"] = std::move(list);
  }

  // --- metrics: rank 0's at the top (as before), every rank's in per_rank ---
  out["metrics"] = own.value("metrics", json::object());
  json per_rank = json::array();
  for (const auto& [r, part] : parts) {
    json m = part.value("metrics", json::object());
    m["rank"] = r;
    per_rank.push_back(std::move(m));
  }
  out["metrics"]["per_rank"] = std::move(per_rank);

  // --- timeline: each rank's tracks, with its clock's offset to rank 0's ---
  json timeline = json::array();
  for (const auto& [r, part] : parts) {
    if (!part.contains("timeline")) continue;
    json t = part["timeline"];
    t["rank"] = r;
    timeline.push_back(std::move(t));
  }
  if (!timeline.empty()) out["timeline"] = std::move(timeline);

  json answered = json::array(), absent = json::array();
  for (const auto& [r, part] : parts) answered.push_back(r);
  for (const auto& [r, why] : missing) absent.push_back({{"rank", r}, {"why", why}});
  out["gathered"] = {{"answered", std::move(answered)}, {"missing", std::move(absent)}};
  return out;
}

uint64_t StateGather::begin(json own, const std::vector<int>& ask, Done done,
                            Clock::time_point now) {
  const int self = own.value("rank", 0);
  Pending p;
  p.parts[self] = own;
  p.own = std::move(own);
  p.done = std::move(done);
  p.deadline = now + timeout_;
  for (int r : ask)
    if (r != self) p.waiting.insert(r);
  const uint64_t id = next_id_++;
  pending_.emplace(id, std::move(p));
  if (pending_.at(id).waiting.empty()) {
    complete(id);
    return 0;
  }
  return id;
}

void StateGather::on_reply(uint64_t id, int rank, json part) {
  auto it = pending_.find(id);
  if (it == pending_.end() || !it->second.waiting.erase(rank)) return;
  it->second.parts[rank] = std::move(part);
  if (it->second.waiting.empty()) complete(id);
}

void StateGather::on_rank_failed(int rank, const std::string& why) {
  std::vector<uint64_t> done;
  for (auto& [id, p] : pending_) {
    if (!p.waiting.erase(rank)) continue;
    p.missing[rank] = why;
    if (p.waiting.empty()) done.push_back(id);
  }
  for (uint64_t id : done) complete(id);
}

void StateGather::expire(Clock::time_point now) {
  std::vector<uint64_t> done;
  for (auto& [id, p] : pending_) {
    if (now < p.deadline) continue;
    for (int r : p.waiting)
      p.missing[r] = "no answer within " + std::to_string(timeout_.count()) + " ms";
    p.waiting.clear();
    done.push_back(id);
  }
  for (uint64_t id : done) complete(id);
}

void StateGather::complete(uint64_t id) {
  auto it = pending_.find(id);
  Pending p = std::move(it->second);
  pending_.erase(it);
  p.done(merge_parts(p.own, p.parts, p.missing));
}

}  // namespace weft::core
