#include "trace.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace weft::cli {
namespace {

using nlohmann::json;

// The kinds' numbers (common/timeline.hpp) that carry a registered name, and what `arg` means.
constexpr int kTask = 1, kActorCall = 2, kActorCreate = 3, kGet = 4, kPut = 5, kWait = 6,
              kTransfer = 7, kSpill = 8, kRestore = 9, kCheckpoint = 10;

std::string event_name(const json& names, const json& kinds, int kind, uint64_t id,
                       const std::string& label) {
  auto named = [&](const std::string& key) {
    auto it = names.find(key);
    return it != names.end() ? it->get<std::string>() : "#" + std::to_string(id);
  };
  switch (kind) {
    case kTask:
    case kActorCall: {
      std::string n = named("f" + std::to_string(id));
      return label.empty() ? n : n + " '" + label + "'";
    }
    case kActorCreate:
      return "create " + named("c" + std::to_string(id));
    case kTransfer:
      return "transfer from rank " + std::to_string(id);
  }
  auto it = kinds.find(std::to_string(kind));
  return it != kinds.end() ? it->get<std::string>() : "event " + std::to_string(kind);
}

json event_args(int kind, uint64_t arg) {
  switch (kind) {
    case kPut:
    case kTransfer:
    case kSpill:
    case kRestore:
    case kCheckpoint:
      return {{"bytes", arg}};
    case kGet:
    case kWait:
      return {{"refs", arg}};
  }
  return json::object();
}

}  // namespace

json chrome_trace(const json& snapshot) {
  if (!snapshot.contains("timeline") || !snapshot["timeline"].is_array())
    throw std::runtime_error("the job's answer has no timeline (a job older than this weft?)");
  const json& parts = snapshot["timeline"];
  // The earliest span of the job, on rank 0's clock, is time 0.
  int64_t base = std::numeric_limits<int64_t>::max();
  for (const auto& p : parts) {
    const int64_t off = p.value("offset_ns", int64_t{0});
    for (const auto& t : p.value("tracks", json::array()))
      for (const auto& e : t["events"]) base = std::min(base, e[1].get<int64_t>() + off);
  }
  if (base == std::numeric_limits<int64_t>::max()) base = 0;

  json events = json::array();
  json dropped = json::object();
  for (const auto& p : parts) {
    const int rank = p.value("rank", 0);
    const int64_t off = p.value("offset_ns", int64_t{0});
    const std::string host = p.value("host", "");
    const json names = p.value("names", json::object()), kinds = p.value("kinds", json::object());
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", rank},
                      {"args", {{"name", "rank " + std::to_string(rank) +
                                             (host.empty() ? "" : " (" + host + ")")}}}});
    events.push_back(
        {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", rank}, {"args", {{"sort_index", rank}}}});
    for (const auto& t : p.value("tracks", json::array())) {
      const uint32_t tid = t.value("tid", 0u);
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", rank},
                        {"tid", tid},
                        {"args", {{"name", t.value("name", "thread")}}}});
      if (t.value("dropped", uint64_t{0}) > 0)
        dropped["rank " + std::to_string(rank) + " " + t.value("name", "thread")] = t["dropped"];
      for (const auto& e : t["events"]) {
        const int kind = e[0].get<int>();
        const int64_t start = e[1].get<int64_t>() + off - base;
        const uint64_t dur = e[2].get<uint64_t>(), id = e[3].get<uint64_t>(),
                       arg = e[4].get<uint64_t>();
        const std::string label = e[5].get<std::string>();
        json ev = {{"ph", "X"},
                   {"name", event_name(names, kinds, kind, id, label)},
                   {"cat", kinds.value(std::to_string(kind), std::string("event"))},
                   {"pid", rank},
                   {"tid", tid},
                   {"ts", static_cast<double>(start) / 1000.0},
                   {"dur", static_cast<double>(dur) / 1000.0}};
        json args = event_args(kind, arg);
        if (!args.empty()) ev["args"] = std::move(args);
        events.push_back(std::move(ev));
      }
    }
  }
  json other = {{"spans_overwritten", std::move(dropped)}};
  if (snapshot.contains("gathered")) other["gathered"] = snapshot["gathered"];
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", other}};
}

}  // namespace weft::cli
