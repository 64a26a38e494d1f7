// The C++ snippets of docs/*.md, compiled and run. check_doc_snippets.py (a test) fails when a
// ```cpp block of the docs is not found here line for line (indentation aside), so the docs
// cannot drift from code that compiles. Keep each snippet between "// snippet: <name>" and
// "// end snippet" exactly as the docs show it.
#include <weft/weft.hpp>

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

// snippet: concepts-task-def
int add(int a, int b) { return a + b; }
WEFT_REMOTE(add);
// end snippet

// snippet: concepts-actor-def
class Counter {
 public:
  explicit Counter(int start) : n_(start) {}
  int incr(int by) { return n_ += by; }

 private:
  int n_;
};
WEFT_ACTOR(Counter, int);     // the class and its constructor's argument types
WEFT_REMOTE(&Counter::incr);  // each remote method
// end snippet

// snippet: concepts-nested-def
int total(std::vector<weft::ObjectRef<int>> parts) {  // nested refs arrive unresolved
  int s = 0;
  for (int x : weft::get(parts)) s += x;
  return s;
}
WEFT_REMOTE(total);
// end snippet

int nap(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return ms;
}
WEFT_REMOTE(nap);

int fails(int x) { throw std::out_of_range("index " + std::to_string(x)); }
WEFT_REMOTE(fails);

// snippet: api-view-param-def
double mean(weft::View<double> v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }
WEFT_REMOTE(mean);
// end snippet

// snippet: api-checkpoint-def
class Tally {
 public:
  int add(int x) {
    seen_.push_back(x);
    return static_cast<int>(seen_.size());
  }
  template <class Archive>
  void serialize(Archive& ar, unsigned) {  // what a checkpoint holds
    ar & seen_;
  }

 private:
  std::vector<int> seen_;
};
WEFT_ACTOR(Tally);
WEFT_REMOTE(&Tally::add);
// end snippet

namespace {

int use_checkpoints() {
  // snippet: api-checkpoint-use
  weft::ActorOptions o;
  o.max_restarts = -1;      // restarted whenever its rank dies
  o.max_task_retries = -1;  // calls in flight then are re-sent, in their order
  o.checkpoint_every = 1;   // state written after every call: a restart loses none
  auto t = weft::actor<Tally>().options(o).remote();
  for (int i = 0; i < 3; ++i) t.task(&Tally::add).remote(i);
  weft::checkpoint(t).get();  // ready once the file is durable
  // end snippet
  return t.task(&Tally::add).remote(3).get();
}

int use_job_checkpoint() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "weft-doc-jobckpt-XXXXXX").string();
  const std::filesystem::path dir = mkdtemp(tmpl.data());
  // snippet: api-job-checkpoint-use
  int step = 0;
  auto tally = weft::actor<Tally>().remote();
  weft::on_job_checkpoint([&](weft::JobCheckpoint& ck) {
    ck.save("step", step);    // a value of the driver
    ck.save("tally", tally);  // an actor's state, after the calls made before
  });
  while (step < 3) tally.task(&Tally::add).remote(step++);
  uint64_t epoch = weft::checkpoint_job(dir);  // 1; durable when it returns
  // ... and in a later run of the job:
  if (std::optional<weft::JobRestore> r = weft::restore_job(dir)) {
    step = r->value<int>("step");                            // 3
    tally = r->actor<Tally>("tally", weft::actor<Tally>());  // holds 0, 1, 2
  }
  // end snippet
  weft::on_job_checkpoint(nullptr);
  const int n = tally.task(&Tally::add).remote(step).get();
  std::filesystem::remove_all(dir);
  return epoch == 1 ? n : -1;
}

int use_tasks() {
  // snippet: concepts-task-use
  weft::ObjectRef<int> a = weft::task(add).remote(1, 2);
  weft::ObjectRef<int> b = weft::task(add).remote(a, 10);  // a is resolved before add runs
  int v = weft::get(b);                                     // 13
  // end snippet
  return v;
}

double use_view_params() {
  // snippet: api-view-param-use
  auto table = weft::put(std::vector<double>(1 << 20, 1.0));  // 8 MiB, in the node store
  double m = weft::task(mean).remote(table).get();             // the task reads it in place
  // end snippet
  return m;
}

size_t use_progress() {
  std::vector<weft::ObjectRef<int>> refs;
  for (int i = 0; i < 8; ++i) refs.push_back(weft::task(add).remote(i, 1));
  std::vector<weft::ObjectRef<int>> pending = refs;
  size_t done = 0;
  {
    // snippet: api-progress
    weft::Progress progress("trials", refs.size());   // on stderr, only while it is a terminal
    while (!pending.empty()) {
      auto [ready, rest] = weft::wait(pending, 1);
      done += ready.size();
      progress.update(done);                          // redrawn in place, at most every 100 ms
      pending = std::move(rest);
    }                                                 // the destructor ends the line
    // end snippet
  }
  return done;
}

int use_actors() {
  // snippet: concepts-actor-use
  weft::ActorHandle<Counter> c = weft::actor<Counter>(0).options({.name = "ctr"}).remote();
  c.task(&Counter::incr).remote(5);
  int six = c.task(&Counter::incr).remote(1).get();  // calls from one caller run in order
  auto same = weft::get_actor<Counter>("ctr");       // std::optional<ActorHandle<Counter>>
  weft::kill(c);                                     // later calls raise ActorDiedError
  // end snippet
  return same.has_value() ? six : -1;
}

int use_objects() {
  // snippet: concepts-objects-use
  weft::ObjectRef<std::vector<double>> table = weft::put(std::vector<double>(1000, 0.5));
  std::vector<weft::ObjectRef<int>> parts;
  for (int i = 0; i < 4; ++i) parts.push_back(weft::task(add).remote(i, i));
  int sum = weft::task(total).remote(parts).get();  // 12: total reads the parts itself
  // end snippet
  return sum + static_cast<int>(weft::get(table).size());
}

bool use_resources() {
  // snippet: concepts-resources-use
  auto light = weft::task(add).options({.num_cpus = 0.5}).remote(1, 1);
  try {
    weft::task(add).options({.resources = {{"tpu", 1}}}).remote(1, 1).get();
  } catch (const weft::InfeasibleError& e) {
    std::printf("%s\n", e.what());  // names the resource no rank has
  }
  // end snippet
  return light.get() == 2;
}

bool use_placement() {
  // snippet: concepts-placement-use
  weft::PlacementGroup pg = weft::placement_group({{{"CPU", 0.5}}, {{"CPU", 0.5}}},
                                                  weft::Strategy::Pack);
  if (!pg.wait(10s)) {
    std::printf("%s: %s\n", weft::to_string(pg.state().state), pg.state().reason.c_str());
  } else {
    auto r = weft::task(add)
                 .options({.num_cpus = 0.5, .placement_group = pg, .bundle_index = 0})
                 .remote(2, 2);
    r.get();
  }
  weft::remove_placement_group(pg);
  // end snippet
  return pg.valid();
}

int use_wait() {
  // snippet: api-wait-loop
  std::vector<weft::ObjectRef<int>> pending;
  for (int i = 0; i < 8; ++i) pending.push_back(weft::task(nap).remote(10 * i));
  int consumed = 0;
  while (!pending.empty()) {
    auto [ready, rest] = weft::wait(pending, /*num_returns=*/1);
    for (auto& r : ready) consumed += (r.get() >= 0);
    pending = std::move(rest);
  }
  // end snippet
  return consumed;
}

int use_errors() {
  int caught = 0;
  // snippet: api-errors
  try {
    weft::task(fails).remote(7).get();
  } catch (const weft::TaskError& e) {
    // e.type_name() == "std::out_of_range", e.message() == "index 7", e.function(), e.rank()
    ++caught;
  }
  auto slow = weft::task(nap).remote(300);
  try {
    slow.get(10ms);
  } catch (const weft::GetTimeoutError&) {
    ++caught;  // the task still runs; slow.get() later returns its value
  }
  // end snippet
  return caught + (slow.get() == 300);
}

bool use_debug_pending() {
  // snippet: troubleshooting-timeout
  auto r = weft::task(nap).remote(50);
  auto [ready, pending] = weft::wait({r}, 1, std::chrono::seconds(30));
  if (ready.empty()) std::fprintf(stderr, "still pending after 30 s: check resources\n");
  // end snippet
  return !ready.empty();
}

}  // namespace

// snippet: api-run
int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    // the driver: runs on rank 0 while every other rank serves tasks and actors
    // end snippet
    int bad = 0;
    auto check = [&](bool ok, const char* what) {
      if (!ok) {
        std::printf("doc snippet failed: %s\n", what);
        ++bad;
      }
    };
    check(use_tasks() == 13, "concepts-task-use");
    check(use_actors() == 6, "concepts-actor-use");
    check(use_objects() == 1012, "concepts-objects-use");
    check(use_resources(), "concepts-resources-use");
    check(use_placement(), "concepts-placement-use");
    check(use_wait() == 8, "api-wait-loop");
    check(use_errors() == 3, "api-errors");
    check(use_view_params() == 1.0, "api-view-param-use");
    check(use_debug_pending(), "troubleshooting-timeout");
    check(use_checkpoints() == 4, "api-checkpoint-use");
    check(use_job_checkpoint() == 4, "api-job-checkpoint-use");
    check(use_progress() == 8, "api-progress");
    if (bad == 0) std::printf("doc snippets OK\n");
    return bad == 0 ? 0 : 1;
  });
}
