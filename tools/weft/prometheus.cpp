#include "prometheus.hpp"

#include <map>
#include <sstream>

namespace weft::cli {
namespace {

using nlohmann::json;

class Writer {
 public:
  // One family: HELP and TYPE once, then its samples.
  void family(const std::string& name, const char* type, const std::string& help) {
    o_ << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  }
  void sample(const std::string& name, const std::map<std::string, std::string>& labels,
              const json& v) {
    o_ << name;
    if (!labels.empty()) {
      o_ << "{";
      bool first = true;
      for (const auto& [k, val] : labels) {
        o_ << (first ? "" : ",") << k << "=\"" << escape(val) << "\"";
        first = false;
      }
      o_ << "}";
    }
    o_ << " " << (v.is_number() ? v.dump() : "0") << "\n";
  }
  void one(const std::string& name, const char* type, const std::string& help,
           const std::map<std::string, std::string>& labels, const json& v) {
    family(name, type, help);
    sample(name, labels, v);
  }
  std::string str() const { return o_.str(); }

 private:
  static std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '\\' || c == '"') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    return out;
  }
  std::ostringstream o_;
};

}  // namespace

std::string prometheus_text(const json& j) {
  Writer w;
  const std::map<std::string, std::string> r0 = {{"rank", std::to_string(j.value("rank", 0))}};
  const json& t = j["tasks"];
  w.one("weft_tasks_submitted_total", "counter", "Tasks rank 0 submitted to a rank.", r0,
        t["submitted"]);
  w.one("weft_tasks_finished_total", "counter", "Tasks of rank 0 whose result arrived.", r0,
        t["finished"]);
  w.one("weft_tasks_failed_total", "counter", "Tasks of rank 0 that ended with an error.", r0,
        t["failed"]);
  w.one("weft_tasks_infeasible_total", "counter",
        "Tasks of rank 0 refused as infeasible (no rank has the resources).", r0, t["infeasible"]);
  w.one("weft_tasks_in_flight", "gauge", "Tasks of rank 0 sent and not finished.", r0,
        t["in_flight"]);
  w.one("weft_tasks_waiting_for_arguments", "gauge",
        "Calls rank 0 holds until their arguments exist.", r0, t["waiting_for_arguments"]);
  w.one("weft_tasks_queued", "gauge", "Work queued at rank 0's resource gate.", r0,
        t["queued_here"]);
  std::map<std::string, size_t> reasons;
  for (const auto& p : j["pending"]) ++reasons[p.value("reason", "unknown")];
  w.family("weft_pending_items", "gauge", "Pending items rank 0 knows, by the reason they wait.");
  for (const auto& [reason, n] : reasons)
    w.sample("weft_pending_items", {{"rank", r0.at("rank")}, {"reason", reason}}, n);
  size_t alive = 0, dead = 0;
  for (const auto& r : j["ranks"]) (r["state"] == "alive" ? alive : dead)++;
  w.family("weft_ranks", "gauge", "Ranks of the job, by state.");
  w.sample("weft_ranks", {{"state", "alive"}}, alive);
  w.sample("weft_ranks", {{"state", "dead"}}, dead);
  std::map<std::string, size_t> groups;
  for (const auto& g : j["placement_groups"]) ++groups[g.value("state", "UNKNOWN")];
  w.family("weft_placement_groups", "gauge", "Placement groups, by state.");
  for (const auto& [state, n] : groups) w.sample("weft_placement_groups", {{"state", state}}, n);
  const json& m = j["metrics"];
  w.one("weft_actors_hosted", "gauge", "Actors hosted on rank 0.", r0, m["actors_hosted"]);
  w.one("weft_messages_sent_total", "counter", "Messages rank 0 sent.", r0, m["messages_sent"]);
  w.one("weft_messages_delivered_total", "counter", "Messages delivered to rank 0.", r0,
        m["messages_delivered"]);
  w.one("weft_messages_queued", "gauge", "Messages waiting in rank 0's outboxes.", r0,
        m["queued_messages"]);
  w.one("weft_transfer_mpi_bytes_total", "counter",
        "Bytes rank 0 read from peers with the MPI transfer path.", r0, m["mpi_bulk_bytes"]);
  w.one("weft_inline_owned_bytes", "gauge", "Bytes of small values rank 0 owns in its heap.", r0,
        m["inline_owned_bytes"]);
  if (m.contains("store")) {
    const json& s = m["store"];
    const std::map<std::string, std::string> n = {{"node", s["node"].dump()}};
    w.one("weft_store_capacity_bytes", "gauge", "The node store's capacity.", n,
          s["capacity_bytes"]);
    w.one("weft_store_used_bytes", "gauge", "Bytes allocated in the node store.", n,
          s["used_bytes"]);
    w.one("weft_store_spilled_bytes", "gauge", "Bytes of the node's objects in spill files.", n,
          s["spilled_bytes"]);
    w.one("weft_store_objects", "gauge", "Objects in the node store's table.", n, s["objects"]);
    w.one("weft_store_spills_total", "counter", "Spill files the node store wrote.", n,
          s["spills"]);
    w.one("weft_store_restores_total", "counter", "Objects restored from spill files.", n,
          s["restores"]);
    w.one("weft_store_evictions_total", "counter", "Secondary copies evicted.", n, s["evictions"]);
  }
  return w.str();
}

}  // namespace weft::cli
