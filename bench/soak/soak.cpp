// The soak (issue #12): many small tasks, actor calls and 1 MiB put/get rounds, mixed in rounds
// so that each kind runs from the start of the job to its end, while every rank prints its
// resident set size once per --sample-ms. bench/soak/run_soak.py launches it, reads the control
// socket's figures (object table, node store) beside those lines, draws the chart and judges:
// RSS flat after warm-up, and the store and the object table back to their starting counts.
//
//   mpirun -n 4 ./weft_soak [--tasks N] [--calls N] [--objects N] [--object-kib K]
//                           [--batch N] [--sample-ms MS] [--hold-ms MS] [--quiet-at-pct P]
//                           [--malloc-arena-max N] [--mmap-threshold-kib K]
//
// Lines it prints (stdout; the runner parses them, people can read them):
//   soak-rss rank=R rss_kb=N shmem_kb=N heap_kb=N timeline_kb=N recycled_kb=N
//                                          every --sample-ms, on every rank: the RSS, its shared
//                                          part (store segment, rings), what malloc has handed
//                                          out (-1 without glibc), the timeline rings' touched
//                                          bytes, and the part of the heap that Weft's recycled-
//                                          block lists keep for reuse (recycled_bytes.hpp)
//   soak-phase begin|end                   the driver, around the workload; before "begin" and
//                                          after "end" it holds --hold-ms with nothing running,
//                                          so that the runner reads the idle counts
//   soak-phase quiet-mid|resume-mid        the driver, around a --hold-ms pause with nothing
//   soak-phase quiet-last|resume-last      running, once the first --quiet-at-pct of the rounds
//                                          are done and once all are (the actors still alive):
//                                          the heap in use at these two idle points is the same
//                                          unless something leaks (run_soak.py judges it)
//   soak-progress pct=P tasks=N calls=N objects=N seconds=S
//   soak-result tasks=N calls=N objects=N seconds=S ok=1   (ok=0 and a reason on a wrong answer)
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "../core/bench_util.hpp"
#include "common/recycled_bytes.hpp"
#include "common/timeline.hpp"

namespace {

int64_t square(int64_t x) { return x * x; }

// A byte of the object and its size, read in place (a View: no copy on any rank).
int64_t probe(weft::View<char> v) { return static_cast<int64_t>(v.size()) + v[v.size() / 2]; }

class Tally {
 public:
  explicit Tally(int64_t start) : total_(start) {}
  int64_t add(int64_t x) { return total_ += x; }

 private:
  int64_t total_;
};

// Resident set size of this process and its shared-memory part (kB, /proc/self/status). The
// shared part is the node store's segment and the rings, counted as their pages are first
// touched: it grows until every page of them has been used once, and is bounded by their size.
struct Rss {
  long total_kb = 0, shmem_kb = 0;
};
Rss rss_now() {
  std::ifstream f("/proc/self/status");
  Rss r;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmRSS:", 0) == 0) r.total_kb = std::stol(line.substr(6));
    if (line.rfind("RssShmem:", 0) == 0) r.shmem_kb = std::stol(line.substr(9));
  }
  return r;
}

// Bytes malloc has handed out and not had back, over all arenas (glibc), or -1 elsewhere: beside
// the RSS it tells a growing heap from one that only fragments.
long heap_in_use_kb() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  return static_cast<long>((m.uordblks + m.hblkhd) / 1024);
#else
  return -1;
#endif
}

// Prints this rank's RSS every `period` until stopped.
class RssSampler {
 public:
  RssSampler(int rank, std::chrono::milliseconds period, bool trim)
      : thread_([this, rank, period, trim] {
          while (!stop_.load()) {
            // Freed heap pages glibc keeps for later mallocs (the high-water mark of a burst of
            // queued work) go back first, so the RSS read is memory something still holds.
            if (trim) malloc_trim(0);
            const Rss r = rss_now();
            std::printf(
                "soak-rss rank=%d rss_kb=%ld shmem_kb=%ld heap_kb=%ld timeline_kb=%zu "
                "recycled_kb=%zu\n",
                rank, r.total_kb, r.shmem_kb, heap_in_use_kb(),
                weft::timeline::touched_bytes() / 1024, weft::recycled_bytes() / 1024);
            std::fflush(stdout);
            for (auto t = period; t.count() > 0 && !stop_.load();
                 t -= std::chrono::milliseconds(10))
              std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
        }) {}
  ~RssSampler() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct Counts {
  long long tasks, calls, objects;
};

void say(const char* what) {
  std::printf("%s\n", what);
  std::fflush(stdout);
}

// A pause with nothing running: every ref of the rounds so far is dropped, every result read.
void quiet(const char* name, std::chrono::milliseconds hold) {
  std::printf("soak-phase quiet-%s\n", name);
  std::fflush(stdout);
  std::this_thread::sleep_for(hold);
  std::printf("soak-phase resume-%s\n", name);
  std::fflush(stdout);
}

// The workload, on the driver. Returns an empty string, or what went wrong.
std::string soak(const Counts& want, long long batch, size_t object_bytes,
                 std::chrono::milliseconds hold, int quiet_at_pct) {
  const int ranks = weft::world_size();
  std::vector<weft::ActorHandle<Tally>> tallies;
  for (int i = 0; i < ranks; ++i) {
    weft::ActorOptions o;
    o.scheduling_strategy = weft::SpreadStrategy{};
    tallies.push_back(weft::actor<Tally>(int64_t{0}).options(o).remote());
  }
  for (auto& t : tallies) t.ready().get();
  std::vector<int64_t> tally_sum(ranks, 0);

  // Rounds: each does its share of every kind, so the kinds stay mixed to the end.
  const long long rounds = std::max<long long>(1, want.tasks / batch);
  Counts done{0, 0, 0};
  const auto t0 = weft::bench::Clock::now();
  int last_pct = -1;
  for (long long r = 0; r < rounds; ++r) {
    const Counts target{want.tasks * (r + 1) / rounds, want.calls * (r + 1) / rounds,
                        want.objects * (r + 1) / rounds};
    std::vector<weft::ObjectRef<int64_t>> refs;
    refs.reserve(static_cast<size_t>(target.tasks - done.tasks));
    int64_t expect = 0;
    for (long long i = done.tasks; i < target.tasks; ++i) {
      const int64_t x = i % 1000;
      refs.push_back(weft::task(square).remote(x));
      expect += x * x;
    }
    std::vector<weft::ObjectRef<int64_t>> calls;
    for (long long i = done.calls; i < target.calls; ++i) {
      const size_t a = static_cast<size_t>(i % ranks);
      calls.push_back(tallies[a].task(&Tally::add).remote(int64_t{1}));
      tally_sum[a] += 1;
    }
    for (long long i = done.objects; i < target.objects; ++i) {
      std::vector<char> bytes(object_bytes, static_cast<char>(i % 100));
      auto obj = weft::put(std::move(bytes));
      const int64_t seen = weft::task(probe).remote(obj).get();
      if (seen != static_cast<int64_t>(object_bytes) + i % 100)
        return "object " + std::to_string(i) + " read back as " + std::to_string(seen);
      if (weft::get(obj).size() != object_bytes) return "object " + std::to_string(i) + " size";
    }
    int64_t got = 0;
    for (int64_t v : weft::get(refs)) got += v;
    if (got != expect)
      return "round " + std::to_string(r) + ": tasks summed to " + std::to_string(got) +
             ", expected " + std::to_string(expect);
    weft::get(calls);
    done = target;
    const int pct = static_cast<int>(100 * (r + 1) / rounds);
    if (quiet_at_pct > 0 && 100 * r / rounds < quiet_at_pct && pct >= quiet_at_pct) {
      refs = {};  // this round's refs go now, not at the end of the iteration
      calls = {};
      quiet("mid", hold);
    }
    if (pct / 5 != last_pct / 5) {
      last_pct = pct;
      std::printf("soak-progress pct=%d tasks=%lld calls=%lld objects=%lld seconds=%.1f\n", pct,
                  done.tasks, done.calls, done.objects, weft::bench::seconds_since(t0));
      std::fflush(stdout);
    }
  }
  if (quiet_at_pct > 0) quiet("last", hold);
  for (int i = 0; i < ranks; ++i) {
    const int64_t total = tallies[i].task(&Tally::add).remote(int64_t{0}).get();
    if (total != tally_sum[i])
      return "actor " + std::to_string(i) + " counted " + std::to_string(total) + " calls, sent " +
             std::to_string(tally_sum[i]);
  }
  for (auto& t : tallies) weft::kill(t);
  std::printf("soak-result tasks=%lld calls=%lld objects=%lld seconds=%.1f ok=1\n", done.tasks,
              done.calls, done.objects, weft::bench::seconds_since(t0));
  return "";
}

}  // namespace

WEFT_REMOTE(square);
WEFT_REMOTE(probe);
WEFT_ACTOR(Tally, int64_t);
WEFT_REMOTE(&Tally::add);

int main(int argc, char** argv) {
  using weft::bench::int_flag;
  const Counts want{int_flag(argc, argv, "--tasks", 10'000'000),
                    int_flag(argc, argv, "--calls", 1'000'000),
                    int_flag(argc, argv, "--objects", 100'000)};
  const long long batch = std::max<long long>(1, int_flag(argc, argv, "--batch", 5000));
  const size_t object_bytes = static_cast<size_t>(int_flag(argc, argv, "--object-kib", 1024)) << 10;
  const auto sample = std::chrono::milliseconds(int_flag(argc, argv, "--sample-ms", 1000));
  const auto hold = std::chrono::milliseconds(int_flag(argc, argv, "--hold-ms", 3000));
  const int quiet_at_pct = static_cast<int>(int_flag(argc, argv, "--quiet-at-pct", 0));

  // Two glibc malloc settings, applied before any thread starts (0: glibc's default), to see
  // how the allocator, rather than Weft, shapes the RSS (README.md has the measurements):
  //  * --malloc-arena-max N (M_ARENA_MAX, as MALLOC_ARENA_MAX=N does): by default each thread
  //    that allocates gets an arena of its own, up to 8 per core. Blocks one thread allocates
  //    and another frees (a submitted task's state, a result) go back to the first one's arena,
  //    and the arenas' free memory counts in the RSS while the bytes in use stay flat.
  //  * --mmap-threshold-kib K (M_MMAP_THRESHOLD): glibc raises its mmap threshold to each
  //    large block freed, so after the first one the 1 MiB vectors come from the heap.
  const long long arena_max = int_flag(argc, argv, "--malloc-arena-max", 0);
  const long long mmap_threshold_kib = int_flag(argc, argv, "--mmap-threshold-kib", 0);
  //  * --trim-before-sample 1: malloc_trim(0) before each RSS reading, which hands the kernel
  //    back the free pages glibc keeps (at the heap's top and inside it): the RSS then follows
  //    what is allocated rather than its high-water mark.
  const bool trim = int_flag(argc, argv, "--trim-before-sample", 0) != 0;
#if defined(__GLIBC__)
  if (arena_max > 0) mallopt(M_ARENA_MAX, static_cast<int>(arena_max));
  if (mmap_threshold_kib > 0) mallopt(M_MMAP_THRESHOLD, static_cast<int>(mmap_threshold_kib << 10));
#endif

  weft::Runtime rt(&argc, &argv);
  RssSampler sampler(weft::rank(), sample, trim);
  if (!rt.is_driver()) return rt.serve();
  std::this_thread::sleep_for(hold);  // the idle counts before
  say("soak-phase begin");
  const std::string error = soak(want, batch, object_bytes, hold, quiet_at_pct);
  say("soak-phase end");
  std::this_thread::sleep_for(hold);  // the idle counts after
  if (!error.empty()) {
    std::printf("soak-result ok=0 reason=%s\n", error.c_str());
    std::fflush(stdout);
    rt.set_exit_code(1);
    return 1;
  }
  return 0;
}
