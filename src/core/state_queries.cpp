// The job's state across ranks, for the control socket: rank 0 asks every live rank for its
// part (kStateQuery), each answers with job_snapshot() as MessagePack (kStateReply), and
// StateGather (state_gather.hpp) merges what came when the last part arrives or its deadline
// passes. Also each rank's timeline part: its rings (common/timeline.hpp) as compact rows, with
// the names of the functions they ran and the clock they were read with.
#include "core/state_queries.hpp"

#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "common/log.hpp"
#include "common/timeline.hpp"
#include "core/event_loop.hpp"
#include "core/state_gather.hpp"
#include "weft/detail/registry.hpp"

namespace weft::core {

using nlohmann::json;

namespace {

// What the loop hands back to the waiting thread; shared, so a gather the waiter gave up on
// lands here harmlessly.
struct Waiting {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<json> merged;
  std::string error;
  bool done = false;
};

// A gather's deadline on the loop is 1 s (event_loop.cpp); a little after it the loop is nudged.
constexpr auto kGatherWait = std::chrono::milliseconds(1100);

}  // namespace

std::optional<json> gather_and_wait(EventLoop& loop, uint8_t want,
                                    std::chrono::milliseconds loop_wait) {
  auto w = std::make_shared<Waiting>();
  loop.post([w, want](EventLoop& l) {
    auto finish = [w](std::optional<json> merged, std::string error) {
      std::lock_guard<std::mutex> g(w->mu);
      w->merged = std::move(merged);
      w->error = std::move(error);
      w->done = true;
      w->cv.notify_all();
    };
    try {
      l.gather_state(want, [finish](json merged) { finish(std::move(merged), ""); });
    } catch (const std::exception& e) {
      finish(std::nullopt, std::string("rank 0 could not describe the job: ") + e.what());
    }
  });
  // The gather ends by its own deadline on the loop; past it the loop is woken once, so a loop
  // parked in its idle back-off finishes the gather without waiting for other work.
  std::unique_lock<std::mutex> g(w->mu);
  if (!w->cv.wait_for(g, kGatherWait, [&] { return w->done; })) {
    g.unlock();
    loop.post([](EventLoop&) {});
    g.lock();
  }
  if (!w->cv.wait_for(g, loop_wait, [&] { return w->done; })) return std::nullopt;
  if (!w->merged) throw std::runtime_error(w->error);
  return std::move(w->merged);
}

void EventLoop::gather_state(uint8_t want, std::function<void(json)> done) {
  json own = job_snapshot(want);
  std::vector<int> ask;
  for (int r = 0; r < size_; ++r)
    if (r != rank_ && !known_failed(r)) ask.push_back(r);
  const uint64_t id =
      gather_->begin(std::move(own), ask, std::move(done), std::chrono::steady_clock::now());
  if (id == 0) return;  // a one-rank job, or every other rank failed: done already ran
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(id);
  w.put<uint8_t>(want);
  for (int r : ask) send(r, Msg::kStateQuery, b);
}

void EventLoop::handle_state_query(int src, const char* data, size_t len) {
  WireReader r(data, len);
  const uint64_t id = r.get<uint64_t>();
  const uint8_t want = r.get<uint8_t>();
  std::vector<uint8_t> packed;
  try {
    packed = json::to_msgpack(job_snapshot(want));
  } catch (const std::exception& e) {
    packed = json::to_msgpack(json{{"rank", rank_}, {"error", e.what()}});
  }
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(id);
  w.put_bytes(packed.data(), packed.size());
  send(src, Msg::kStateReply, b);
}

void EventLoop::handle_state_reply(int src, const char* data, size_t len) {
  if (!gather_) return;
  WireReader r(data, len);
  const uint64_t id = r.get<uint64_t>();
  auto [p, n] = r.rest();
  json part;
  try {
    part = json::from_msgpack(reinterpret_cast<const uint8_t*>(p),
                              reinterpret_cast<const uint8_t*>(p) + n);
  } catch (const std::exception& e) {
    WEFT_LOG(Error) << "the state rank " << src << " sent does not decode: " << e.what();
    part = json{{"rank", src}, {"error", std::string("its part did not decode: ") + e.what()}};
  }
  if (part.contains("timeline")) {
    // Its clock against ours: on one host both read the same monotonic clock; across hosts the
    // offset is taken now, off by at most the reply's one-way latency.
    json& t = part["timeline"];
    const bool same_host =
        src < static_cast<int>(topo_.host_names.size()) &&
        topo_.host_names[src] == topo_.host_names[rank_];
    t["offset_ns"] = same_host ? int64_t{0}
                               : static_cast<int64_t>(timeline::now_ns()) -
                                     t.value("clock_ns", int64_t{0});
  }
  gather_->on_reply(id, src, std::move(part));
}

json EventLoop::timeline_part() const {
  json tracks = json::array();
  std::set<std::pair<int, uint64_t>> named;  // (kind, id) whose name goes in `names`
  for (const timeline::Track& t : timeline::collect()) {
    json rows = json::array();
    for (const timeline::Event& e : t.events) {
      rows.push_back({static_cast<int>(e.kind), e.start_ns, e.dur_ns, e.id, e.arg,
                      std::string(e.label)});
      if (e.kind == timeline::Kind::kTask || e.kind == timeline::Kind::kActorCall ||
          e.kind == timeline::Kind::kActorCreate)
        named.insert({static_cast<int>(e.kind), e.id});
    }
    tracks.push_back(
        {{"tid", t.tid}, {"name", t.name}, {"dropped", t.dropped}, {"events", std::move(rows)}});
  }
  json names = json::object();  // "function id" or "class id" → its registered name
  for (const auto& [kind, id] : named) {
    if (kind == static_cast<int>(timeline::Kind::kActorCreate)) {
      const detail::ClassEntry* ce = detail::find_class(id);
      names["c" + std::to_string(id)] = ce ? ce->name : "class #" + std::to_string(id);
    } else {
      const detail::FunctionEntry* fe = detail::find_function(id);
      names["f" + std::to_string(id)] = fe ? fe->name : "function #" + std::to_string(id);
    }
  }
  json kinds = json::object();
  for (int k = 1; k <= static_cast<int>(timeline::Kind::kCheckpoint); ++k)
    kinds[std::to_string(k)] = timeline::kind_name(static_cast<timeline::Kind>(k));
  return {{"enabled", timeline::enabled()},
          {"clock_ns", timeline::now_ns()},
          {"host", rank_ < static_cast<int>(topo_.host_names.size()) ? topo_.host_names[rank_]
                                                                    : ""},
          {"kinds", std::move(kinds)},
          {"names", std::move(names)},
          {"tracks", std::move(tracks)}};
}

}  // namespace weft::core
