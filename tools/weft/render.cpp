#include "render.hpp"

#include <sstream>
#include <stdexcept>

namespace weft::cli {
namespace {

using nlohmann::json;

std::string scalar(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

std::string resources(const json& r) {
  std::string s;
  for (const auto& [k, v] : r.items()) s += (s.empty() ? "" : " ") + k + "=" + scalar(v);
  return s.empty() ? "-" : s;
}

}  // namespace

std::string render_status(const json& j, const std::string& session) {
  std::ostringstream o;
  const json& job = j["job"];
  std::string hosts;
  for (const auto& h : job["hosts"]) hosts += (hosts.empty() ? "" : ", ") + h.get<std::string>();
  o << "job " << session << ": " << job["ranks"] << " ranks, " << job["nodes"] << " nodes, hosts "
    << hosts << "\n\nranks:\n";
  for (const auto& r : j["ranks"]) {
    o << "  rank " << r["rank"] << "  node " << r["node"] << "  " << scalar(r["host"]) << "  "
      << scalar(r["state"]) << "  total " << resources(r["total"]);
    if (r.value("answered", false))
      o << "  used " << resources(r["used"]) << "  queued " << r["queued"] << "  running "
        << r["running"];
    else if (r.contains("missing"))
      o << "  (no answer: " << scalar(r["missing"]) << ")";
    o << "\n";
  }
  o << "\nnodes:\n";
  for (const auto& n : j["nodes"]) {
    std::string ranks;
    for (const auto& r : n["ranks"]) ranks += (ranks.empty() ? "" : ",") + r.dump();
    o << "  node " << n["node"] << "  " << scalar(n["host"]) << "  ranks " << ranks << "  total "
      << resources(n["total"]) << "\n";
  }
  const json& t = j["tasks"];
  o << "\ntasks of every rank: " << t["submitted"] << " submitted, " << t["finished"]
    << " finished, " << t["failed"] << " failed, " << t["infeasible"] << " infeasible; "
    << t["in_flight"] << " in flight, " << t["waiting_for_arguments"]
    << " waiting for arguments, " << t["queued_here"] << " queued at a gate\n";
  if (j.contains("tasks") && !t.value("by_rank", json::array()).empty()) {
    o << "  submitted by rank:";
    for (const auto& b : t["by_rank"]) o << "  " << b["rank"] << ": " << b.value("submitted", 0);
    o << "\n";
  }
  const json running = j.value("running", json::array());
  o << "\nrunning (" << running.size() << "):\n";
  for (const auto& p : running)
    o << "  " << scalar(p["kind"]) << " " << scalar(p["what"]) << "  " << scalar(p["text"])
      << "\n";
  o << "\npending (" << j["pending"].size() << "):\n";
  for (const auto& p : j["pending"]) {
    o << "  " << scalar(p["kind"]) << " " << scalar(p["what"]) << "  [" << scalar(p["where"])
      << "]  " << scalar(p["text"]) << "\n";
    if (p.contains("arguments"))
      for (const auto& a : p["arguments"])
        o << "      argument " << scalar(a["object"])
          << (a.contains("producer") ? ", the result of " + scalar(a["producer"]) : "") << "\n";
  }
  o << "\ninfeasible (" << j["infeasible"].size() << ", latest kept):\n";
  for (const auto& i : j["infeasible"])
    o << "  " << scalar(i["what"]) << " [rank " << i.value("rank", 0) << "]: " << scalar(i["reason"])
      << "\n";
  o << "\nplacement groups (" << j["placement_groups"].size() << "):\n";
  for (const auto& g : j["placement_groups"]) {
    o << "  group " << g["id"] << (scalar(g["name"]).empty() ? "" : " '" + scalar(g["name"]) + "'")
      << "  " << scalar(g["state"]);
    if (!scalar(g["reason"]).empty() && scalar(g["state"]) != "CREATED")
      o << ": " << scalar(g["reason"]);
    o << "\n";
  }
  const json missing = j.value("/gathered/missing"_json_pointer, json::array());
  if (!missing.empty()) {
    o << "\nranks that gave no state (" << missing.size() << "):\n";
    for (const auto& m : missing) o << "  rank " << m["rank"] << ": " << scalar(m["why"]) << "\n";
  }
  return o.str();
}

json list_rows(const json& j, const std::string& kind) {
  json rows = json::array();
  if (kind == "tasks") {
    for (const auto& p : j.value("running", json::array())) rows.push_back(p);
    for (const auto& p : j["pending"])
      if (p["kind"] == "task" || p["kind"] == "actor_call") rows.push_back(p);
    for (const auto& i : j["infeasible"])
      rows.push_back({{"kind", "task"},
                      {"what", i["what"]},
                      {"reason", "infeasible"},
                      {"rank", i.value("rank", 0)},
                      {"text", i["reason"]}});
  } else if (kind == "actors") {
    for (const auto& a : j["actors"]) rows.push_back(a);
    for (const auto& p : j["pending"])
      if (p["kind"] == "actor") rows.push_back(p);
  } else if (kind == "placement-groups") {
    rows = j["placement_groups"];
  } else if (kind == "objects") {
    rows = j.value("objects", json::array());
  } else if (kind == "nodes") {
    rows = j["nodes"];
  } else {
    throw std::runtime_error("weft list: unknown kind " + kind +
                             " (tasks, actors, placement-groups, objects or nodes)");
  }
  return rows;
}

json filter_rows(const json& rows, const std::map<std::string, std::string>& f, size_t limit) {
  json out = json::array();
  for (const auto& r : rows) {
    bool keep = true;
    for (const auto& [k, v] : f) keep = keep && r.contains(k) && scalar(r[k]) == v;
    if (!keep) continue;
    if (limit && out.size() >= limit) break;
    out.push_back(r);
  }
  return out;
}

std::string render_rows(const json& rows) {
  std::ostringstream o;
  for (const auto& r : rows) {
    std::string line;
    for (const auto& [k, v] : r.items()) {
      if (v.is_object() || v.is_array())
        line += (line.empty() ? "" : "  ") + k + "=" + v.dump();
      else
        line += (line.empty() ? "" : "  ") + k + "=" + scalar(v);
    }
    o << line << "\n";
  }
  o << "(" << rows.size() << " rows)\n";
  return o.str();
}

}  // namespace weft::cli
