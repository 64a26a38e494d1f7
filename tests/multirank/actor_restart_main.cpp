// Actor restarts and checkpoints (issue #10): run under `mpirun --enable-recovery -n 4` with
// WEFT_RESOURCES giving ranks 1-3 a "worker" slot, so actors live on workers, and
// WEFT_ACTOR_CHECKPOINT_DIR set. Actors are spread by the creator (fewest placed first, ranks 1, 2, 3,
// 1, ...), so `plain`, `log` and `dee` share rank 1, with fillers on 2 and 3.
//  * `log` (checkpoint_every = 1, max_restarts = -1, max_task_retries = -1) gets 200 calls that
//    each append their number; call 100 SIGKILLs rank 1 once. After the restart its state holds
//    0..199 exactly once and in order: completed calls restored, in-flight ones re-sent in order,
//    and call 150, held for its argument (a 1 s task) across the death and the restart, still
//    before 151..199.
//  * weft::checkpoint(log) ready: the file is there and src/ft reads it back as a Log.
//  * `plain` (not serializable, max_restarts = 1, max_task_retries = 0): a call running at the
//    death fails with ActorDiedError naming it; later calls reach the restart, whose state comes
//    from the constructor. Killed once more: restarts used up, an ActorDiedError with the count.
//  * `dee` (checkpoint_every = 1): its checkpoint is damaged before the death; its restart
//    fails with an ActorDiedError naming the file, never a fresh start.
//  * a task on a worker that calls `log` through a handle it received finds the restart too.
//  * get_actor("log") names the restarted rank; `solo` (named, no restarts, on rank 1 through
//    the resource `solo`) dies with rank 1 and its name is taken again by a new actor.
// Prints ACTOR_RESTART_OK and RESTART_MS figures, or FAILED: ... and a non-zero exit code.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "core/actor_checkpoints.hpp"
#include "ft/build_id.hpp"
#include "ft/checkpoint_file.hpp"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

void die_once(const std::string& marker) {
  if (marker.empty() || fs::exists(marker)) return;
  std::ofstream(marker) << std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  std::fflush(nullptr);
  raise(SIGKILL);
}

// Checkpointable: a serialize member.
class Log {
 public:
  Log() = default;
  int add(int n, std::string marker) {
    if (n == 100) die_once(marker);
    seen_.push_back(n);
    return static_cast<int>(seen_.size());
  }
  std::vector<int> all() const { return seen_; }
  int where() const { return weft::rank(); }
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& seen_;
  }

 private:
  std::vector<int> seen_;
};

// Not serializable: restarts from its constructor.
class Plain {
 public:
  explicit Plain(int start) : seen_{start} {}
  int add(int n) {
    seen_.push_back(n);
    return static_cast<int>(seen_.size());
  }
  int slow(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return ms;
  }
  void crash(std::string marker) { die_once(marker); }
  std::vector<int> all() const { return seen_; }
  int where() const { return weft::rank(); }

 private:
  std::vector<int> seen_;
};

class Filler {
 public:
  int where() const { return weft::rank(); }
};

int slow_value(int v, int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return v;
}

int poke(weft::ActorHandle<Log> log, int n) {
  return log.task(&Log::add).remote(n, std::string()).get(60s);
}

int fail(const std::string& why) {
  std::printf("FAILED: %s\n", why.c_str());
  std::fflush(stdout);
  return 1;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

weft::ActorOptions on_worker(std::string name = {}) {
  weft::ActorOptions o;
  o.name = std::move(name);
  o.resources = {{"worker", 1}};
  return o;
}

int drive() {
  if (weft::world_size() != 4) return fail("needs 4 ranks");
  const char* dir_env = std::getenv("WEFT_ACTOR_CHECKPOINT_DIR");
  if (!dir_env) return fail("needs WEFT_ACTOR_CHECKPOINT_DIR");
  const fs::path ckdir = dir_env;
  const fs::path marks = fs::temp_directory_path() / ("weft-restart-" + std::to_string(getpid()));
  fs::create_directories(marks);
  auto marker = [&](const char* name) { return (marks / name).string(); };
  fs::remove(weft::ft::checkpoint_path(ckdir, "log"));  // an earlier run's
  fs::remove(weft::ft::checkpoint_path(ckdir, "dee"));

  weft::ActorOptions po = on_worker();
  po.max_restarts = 1;
  auto plain = weft::actor<Plain>(7).options(po).remote();
  std::vector<weft::ActorHandle<Filler>> fillers;
  fillers.push_back(weft::actor<Filler>().options(on_worker()).remote());
  fillers.push_back(weft::actor<Filler>().options(on_worker()).remote());
  weft::ActorOptions lo = on_worker("log");
  lo.max_restarts = -1;
  lo.max_task_retries = -1;
  lo.checkpoint_every = 1;
  auto log = weft::actor<Log>().options(lo).remote();
  fillers.push_back(weft::actor<Filler>().options(on_worker()).remote());
  fillers.push_back(weft::actor<Filler>().options(on_worker()).remote());
  weft::ActorOptions dopt = on_worker("dee");
  dopt.max_restarts = -1;
  dopt.checkpoint_every = 1;
  auto dee = weft::actor<Log>().options(dopt).remote();

  const int home = plain.task(&Plain::where).remote().get(60s);
  const int log_at = log.task(&Log::where).remote().get(60s);
  const int dee_at = dee.task(&Log::where).remote().get(60s);
  if (log_at != home || dee_at != home)
    return fail("plain, log and dee are not on one rank: ranks " + std::to_string(home) + ", " +
                std::to_string(log_at) + ", " + std::to_string(dee_at));
  std::printf("plain, log and dee live on rank %d\n", home);
  // `solo` (named, max_restarts = 0) lives there too, through a resource only rank 1 has
  // (made last, so the spread above is as before): when that rank dies its name is free.
  weft::ActorOptions so;
  so.name = "solo";
  so.resources = {{"solo", 1}};
  auto solo = weft::actor<Filler>().options(so).remote();
  if (solo.task(&Filler::where).remote().get(60s) != home) return fail("solo is not on rank 1");

  // A non-serializable class with checkpoint options: refused at once, not a silent no-op.
  try {
    weft::ActorOptions bad = on_worker();
    bad.checkpoint_every = 1;
    weft::actor<Plain>(0).options(bad).remote();
    return fail("checkpoint options on a non-serializable class were accepted");
  } catch (const weft::Error& e) {
    if (!contains(e.what(), "not serializable"))
      return fail(std::string("wrong text: ") + e.what());
  }

  for (int i = 0; i < 5; ++i) plain.task(&Plain::add).remote(i).get(60s);
  for (int i = 0; i < 3; ++i) dee.task(&Log::add).remote(i, std::string()).get(60s);
  // weft::checkpoint: ready means durable and valid (read back with src/ft).
  for (int i = 0; i < 10; ++i) log.task(&Log::add).remote(i, std::string()).get(60s);
  weft::checkpoint(log).get(60s);
  {
    const fs::path file = weft::ft::checkpoint_path(ckdir, "log");
    auto c = weft::ft::read_checkpoint(file, "Log", weft::ft::current_build_id());
    auto s = weft::core::CheckpointState::decode(c.state, file.string());
    weft::serde::Reader in(s.object.data(), s.object.size());
    Log back;
    weft::serde::decode(in, back);
    if (back.all().size() != 10 || c.header.seq != 12)  // where(), 10 adds, the checkpoint
      return fail("the checkpoint read back holds " + std::to_string(back.all().size()) +
                  " calls, seq " + std::to_string(c.header.seq));
    std::printf("weft::checkpoint: %s valid, seq %llu\n", file.c_str(),
                static_cast<unsigned long long>(c.header.seq));
  }
  // Damage dee's checkpoint in its state bytes: the 8 after the state's layout tag.
  const fs::path dee_file = weft::ft::checkpoint_path(ckdir, "dee");
  {
    std::ifstream in(dee_file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string tag("EFTCPT1\0", 8);
    const size_t at = bytes.find(tag);
    if (at == std::string::npos) return fail("no state found in " + dee_file.string());
    std::fstream f(dee_file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at + 8));
    f.write("garbage!", 8);
  }
  // A call that will be running on plain when its rank dies (max_task_retries = 0).
  auto running = plain.task(&Plain::slow).remote(30000);
  std::this_thread::sleep_for(200ms);

  // The stream: call 100 kills the rank; every call must come back.
  const auto t_kill = std::chrono::steady_clock::now();
  std::vector<weft::ObjectRef<int>> rs;
  // Call 150 waits for its argument, a 1 s task, across the death and the restart: the calls
  // after it, ready at once, must still run after it (the caller keeps its order).
  for (int i = 10; i < 200; ++i) {
    if (i == 150) {
      auto late = weft::task(slow_value).options({.resources = {{"worker", 1}}}).remote(i, 1000);
      rs.push_back(log.task(&Log::add).remote(late, marker("log")));
    } else {
      rs.push_back(log.task(&Log::add).remote(i, marker("log")));
    }
  }
  rs[90].get(60s);  // call 100, the one that killed the rank, answered by the restart
  const auto t_back = std::chrono::system_clock::now();
  int before = 0;  // completed on rank `home` with their results still on the way when it died
  for (auto& r : rs) {
    try {
      r.get(60s);
    } catch (const weft::ActorDiedError& e) {
      if (!contains(e.what(), "completed before its rank failed")) throw;
      ++before;
    }
  }
  // Their results are kept in the checkpoint (small, no refs): none may fail.
  if (before != 0)
    return fail(std::to_string(before) + " completed calls failed instead of their kept result");
  long long t_kill_us = 0;
  std::ifstream(marker("log")) >> t_kill_us;
  auto seen = log.task(&Log::all).remote().get(60s);
  if (seen.size() != 200)
    return fail("log holds " + std::to_string(seen.size()) + " calls, not 200");
  for (int i = 0; i < 200; ++i)
    if (seen[i] != i)
      return fail("log's call " + std::to_string(i) + " is " + std::to_string(seen[i]));
  const int log_rank = log.task(&Log::where).remote().get(60s);
  if (log_rank == home) return fail("log did not move");
  if (log.rank() != log_rank)
    return fail("log.rank() says " + std::to_string(log.rank()) + " after the restart, not " +
                std::to_string(log_rank));
  std::printf("log restarted on rank %d with all 200 calls in order\n", log_rank);
  // The head's directory follows the restart: get_actor("log") names the new rank, not the one
  // that failed (the creator's kNameUpdate).
  auto by_name = weft::get_actor<Log>("log");
  if (!by_name) return fail("get_actor(\"log\") found nothing after the restart");
  if (by_name->ref().rank != log_rank)
    return fail("get_actor(\"log\") says rank " + std::to_string(by_name->ref().rank) +
                " after the restart, not " + std::to_string(log_rank));
  if (by_name->task(&Log::all).remote().get(60s).size() != 200)
    return fail("a call through get_actor(\"log\") did not reach the restarted actor");
  // `solo` died with rank 1 for good: its name is free, and a new actor takes it.
  if (weft::get_actor<Filler>("solo")) return fail("get_actor(\"solo\") found the dead actor");
  auto solo2 = weft::actor<Filler>().options(on_worker("solo")).remote();
  solo2.ready().get(60s);
  auto solo2_by_name = weft::get_actor<Filler>("solo");
  if (!solo2_by_name || !(solo2_by_name->id() == solo2.id()))
    return fail("the name of the dead solo was not taken by the new actor");
  std::printf("named actors: log found on rank %d after its restart; solo's name reused\n",
              log_rank);
  const double restart_ms =
      (std::chrono::duration_cast<std::chrono::microseconds>(t_back.time_since_epoch()).count() -
       t_kill_us) /
      1000.0;
  std::printf(
      "RESTART_MS %.1f (SIGKILL to the killed call answered by the restart; whole stream "
      "of 190 calls %.1f ms)\n",
      restart_ms,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_kill).count());

  try {
    running.get(60s);
    return fail("a call running at the death returned with max_task_retries = 0");
  } catch (const weft::ActorDiedError& e) {
    if (!contains(e.what(), "max_task_retries = 0") || !contains(e.what(), std::to_string(home)))
      return fail(std::string("wrong text for the call in flight: ") + e.what());
    std::printf("in flight, not re-sent: %s\n", e.what());
  }
  // plain restarted from its constructor: its state is {7}, and then the new call.
  plain.task(&Plain::add).remote(99).get(60s);
  auto ps = plain.task(&Plain::all).remote().get(60s);
  if (ps != std::vector<int>{7, 99}) return fail("plain was not restarted from its constructor");
  std::printf("plain restarted from its constructor on rank %d\n",
              plain.task(&Plain::where).remote().get(60s));

  // dee: the damaged checkpoint is an error naming the file.
  try {
    dee.task(&Log::all).remote().get(60s);
    return fail("dee restarted from a damaged checkpoint");
  } catch (const weft::ActorDiedError& e) {
    if (!contains(e.what(), dee_file.string()))
      return fail(std::string("the damaged checkpoint's error does not name it: ") + e.what());
    std::printf("damaged checkpoint: %s\n", e.what());
  }

  // Another rank's handle finds the restarted log.
  const int v = weft::task(poke).options({.resources = {{"worker", 1}}}).remote(log, 500).get(60s);
  if (v != 201) return fail("a task's call through a passed handle returned " + std::to_string(v));

  // plain killed again: max_restarts = 1 is used up.
  plain.task(&Plain::crash).remote(marker("plain2"));
  std::string exhausted;
  for (int i = 0; i < 600 && exhausted.empty(); ++i) {
    try {
      plain.task(&Plain::add).remote(1).get(60s);
      std::this_thread::sleep_for(50ms);
    } catch (const weft::ActorDiedError& e) {
      // A call in flight at the death fails as such (max_task_retries = 0); later ones say why
      // there is no restart.
      if (contains(e.what(), "used up")) exhausted = e.what();
    }
  }
  if (exhausted.empty()) return fail("plain lived on after its second death");
  if (!contains(exhausted, "max_restarts = 1 used up") || !contains(exhausted, "1 restart"))
    return fail("the exhausted error does not count restarts: " + exhausted);
  std::printf("exhausted: %s\n", exhausted.c_str());
  // log lives on (restarted again if it shared that rank) with its 201 calls.
  if (log.task(&Log::all).remote().get(60s).size() != 201) return fail("log lost calls");
  fs::remove_all(marks);
  std::printf("ACTOR_RESTART_OK\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace

WEFT_ACTOR(Log);
WEFT_ACTOR(Plain, int);
WEFT_ACTOR(Filler);
WEFT_REMOTE(&Log::add);
WEFT_REMOTE(&Log::all);
WEFT_REMOTE(&Log::where);
WEFT_REMOTE(&Plain::add);
WEFT_REMOTE(&Plain::slow);
WEFT_REMOTE(&Plain::crash);
WEFT_REMOTE(&Plain::all);
WEFT_REMOTE(&Plain::where);
WEFT_REMOTE(&Filler::where);
WEFT_REMOTE(poke);
WEFT_REMOTE(slow_value);

int main(int argc, char** argv) {
  int code = weft::run(argc, argv, drive);
  std::printf("rank exit code %d\n", code);
  std::fflush(stdout);
  return code;
}
