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
  // Every rank's figures (rank 0 gathers them); a snapshot of rank 0 alone has none per rank.
  json by_rank = j["tasks"].value("by_rank", json::array());
  if (by_rank.empty()) {
    json t = j["tasks"];
    t["rank"] = j.value("rank", 0);
    by_rank.push_back(t);
  }
  json per_rank = j["metrics"].value("per_rank", json::array());
  if (per_rank.empty()) {
    json m = j["metrics"];
    m["rank"] = j.value("rank", 0);
    per_rank.push_back(m);
  }
  auto rank_of = [](const json& x) { return std::map<std::string, std::string>{{"rank", x["rank"].dump()}}; };
  // One family, one sample per rank.
  auto each = [&](const json& rows, const std::string& name, const char* type,
                  const std::string& help, const char* key) {
    w.family(name, type, help);
    for (const auto& x : rows) w.sample(name, rank_of(x), x.value(key, json(0)));
  };
  each(by_rank, "weft_tasks_submitted_total", "counter", "Tasks the rank submitted to a rank.",
       "submitted");
  each(by_rank, "weft_tasks_finished_total", "counter", "Tasks of the rank whose result arrived.",
       "finished");
  each(by_rank, "weft_tasks_failed_total", "counter", "Tasks of the rank that ended with an error.",
       "failed");
  each(by_rank, "weft_tasks_infeasible_total", "counter",
       "Tasks of the rank refused as infeasible (no rank has the resources).", "infeasible");
  each(by_rank, "weft_tasks_in_flight", "gauge", "Tasks of the rank sent and not finished.",
       "in_flight");
  each(by_rank, "weft_tasks_waiting_for_arguments", "gauge",
       "Calls the rank holds until their arguments exist.", "waiting_for_arguments");
  each(by_rank, "weft_tasks_queued", "gauge", "Work queued at the rank's resource gate.",
       "queued_here");
  std::map<std::string, size_t> reasons;
  for (const auto& p : j["pending"]) ++reasons[p.value("reason", "unknown")];
  w.family("weft_pending_items", "gauge", "Pending items of every rank, by the reason they wait.");
  for (const auto& [reason, n] : reasons) w.sample("weft_pending_items", {{"reason", reason}}, n);
  w.one("weft_tasks_running", "gauge", "Tasks running on some rank.", {},
        j.value("running", json::array()).size());
  size_t alive = 0, dead = 0;
  for (const auto& r : j["ranks"]) (r["state"] == "alive" ? alive : dead)++;
  w.family("weft_ranks", "gauge", "Ranks of the job, by state.");
  w.sample("weft_ranks", {{"state", "alive"}}, alive);
  w.sample("weft_ranks", {{"state", "dead"}}, dead);
  const size_t missing = j.value("/gathered/missing"_json_pointer, json::array()).size();
  w.one("weft_ranks_unanswered", "gauge",
        "Live ranks whose figures are missing here (no answer in time).", {}, missing);
  std::map<std::string, size_t> groups;
  for (const auto& g : j["placement_groups"]) ++groups[g.value("state", "UNKNOWN")];
  w.family("weft_placement_groups", "gauge", "Placement groups, by state.");
  for (const auto& [state, n] : groups) w.sample("weft_placement_groups", {{"state", state}}, n);
  each(per_rank, "weft_actors_hosted", "gauge", "Actors hosted on the rank.", "actors_hosted");
  each(per_rank, "weft_messages_sent_total", "counter", "Messages the rank sent.", "messages_sent");
  each(per_rank, "weft_messages_delivered_total", "counter", "Messages delivered to the rank.",
       "messages_delivered");
  each(per_rank, "weft_messages_queued", "gauge", "Messages waiting in the rank's outboxes.",
       "queued_messages");
  each(per_rank, "weft_transfer_mpi_bytes_total", "counter",
       "Bytes the rank read from peers with the MPI transfer path.", "mpi_bulk_bytes");
  each(per_rank, "weft_inline_owned_bytes", "gauge", "Bytes of small values the rank owns in its heap.",
       "inline_owned_bytes");
  each(per_rank, "weft_recycled_bytes", "gauge",
       "Freed blocks the rank keeps for reuse, in bytes: heap in use, bounded per list.",
       "recycled_bytes");
  // The node stores, once per node (every rank of a node reports the same one).
  std::map<int, json> stores;
  for (const auto& m : per_rank)
    if (m.contains("store")) stores.emplace(m["store"].value("node", 0), m["store"]);
  struct StoreFigure {
    const char* name;
    const char* type;
    const char* help;
    const char* key;
  };
  static const StoreFigure kStore[] = {
      {"weft_store_capacity_bytes", "gauge", "The node store's capacity.", "capacity_bytes"},
      {"weft_store_used_bytes", "gauge", "Bytes allocated in the node store.", "used_bytes"},
      {"weft_store_spilled_bytes", "gauge", "Bytes of the node's objects in spill files.",
       "spilled_bytes"},
      {"weft_store_objects", "gauge", "Objects in the node store's table.", "objects"},
      {"weft_store_spills_total", "counter", "Spill files the node store wrote.", "spills"},
      {"weft_store_restores_total", "counter", "Objects restored from spill files.", "restores"},
      {"weft_store_evictions_total", "counter", "Secondary copies evicted.", "evictions"}};
  if (!stores.empty()) {
    for (const StoreFigure& f : kStore) {
      w.family(f.name, f.type, f.help);
      for (const auto& [node, st] : stores)
        w.sample(f.name, {{"node", std::to_string(node)}}, st.value(f.key, json(0)));
    }
  }
  return w.str();
}

}  // namespace weft::cli
