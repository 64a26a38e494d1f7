// Weft's microbenchmarks, named like Ray's release microbenchmarks so figures sit side by side,
// each printed beside a baseline measured in the same run:
//   - raw MPI ping-pong between ranks 0 and 1 (before the runtime starts),
//   - a raw oneTBB task_group running empty lambdas on rank 0,
//   - memcpy of the same bytes for object puts.
// It also counts heap allocations per task on rank 0 (alloc_counter.hpp).
// Run: mpirun -n 4 <loopback flags> ./weft_microbench [--quick] [--json FILE]
// Fixed workload for bench/callgrind_tasks.sh: --fixed-sync N --fixed-async N runs one warm-up
// task, then exactly N sync and N async no-op tasks, and nothing else (no baselines); with
// --fixed-warm, the async burst is run once more before them (the steady state); with
// --fixed-int-arg, the async tasks take an int and return it.
#include <mpi.h>
#include <stdlib.h>
#include <tbb/task_group.h>
#include <weft/weft.hpp>

#include <cstring>
#include <numeric>

#include <algorithm>
#include <set>

#include "alloc_counter.hpp"
#include "bench_util.hpp"
#include "common/timeline.hpp"
#include "mpi_baseline.hpp"

using weft::bench::Clock;
using weft::bench::seconds_since;
using weft::bench::mpi_pingpong_rtt_us;

namespace {

void noop() {}
// The callgrind window: bench/callgrind_tasks.sh zeroes each process's counters on entering
// begin and dumps them on entering end (--zero-before/--dump-before), so start-up and shutdown,
// whose MPI polling varies by millions of instructions from run to run, stay out.
// Distinct bodies, so the compiler cannot fold them into noop (or each other).
volatile int callgrind_window_state = 0;
[[gnu::noinline]] void callgrind_window_begin() { callgrind_window_state = 1; }
[[gnu::noinline]] void callgrind_window_end() { callgrind_window_state = 2; }
int ident(int x) { return x; }
// Switches this rank's timeline recording (common/timeline.hpp); answers the rank it ran on.
int set_timeline(bool on) {
  weft::timeline::configure(on, 16384);
  return weft::rank();
}
// A client task: submits n no-ops from whatever rank it runs on and waits for them.
int client(int n) {
  std::vector<weft::ObjectRef<void>> refs;
  refs.reserve(n);
  for (int i = 0; i < n; ++i) refs.push_back(weft::task(noop).remote());
  for (auto& r : refs) r.get();
  return n;
}

class Echo {
 public:
  Echo() = default;
  int ping(int x) { return x; }
};

// Each client drives its own actor (n:n).
int actor_client(weft::ActorHandle<Echo> a, int n) {
  std::vector<weft::ObjectRef<int>> refs;
  refs.reserve(n);
  for (int i = 0; i < n; ++i) refs.push_back(a.task(&Echo::ping).remote(i));
  for (auto& r : refs) r.get();
  return n;
}

}  // namespace

WEFT_REMOTE(noop);
WEFT_REMOTE(ident);
WEFT_REMOTE(set_timeline);
WEFT_REMOTE(client);
WEFT_ACTOR(Echo);
WEFT_REMOTE(&Echo::ping);
WEFT_REMOTE(actor_client);
WEFT_REMOTE(callgrind_window_begin);
WEFT_REMOTE(callgrind_window_end);

namespace {

double tbb_task_group_rate(int n) {
  tbb::task_group g;
  std::atomic<int> sink{0};
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) g.run([&] { sink.fetch_add(1, std::memory_order_relaxed); });
  g.wait();
  return n / seconds_since(t0);
}

double memcpy_gbps(size_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 0);
  std::memcpy(b.data(), a.data(), bytes);  // fault both in
  auto t0 = Clock::now();
  std::memcpy(b.data(), a.data(), bytes);
  return bytes / seconds_since(t0) / 1e9;
}

template <class F>
double rate(int n, F&& body) {
  auto t0 = Clock::now();
  body();
  return n / seconds_since(t0);
}

// The callgrind workload: fixed counts on a fixed rank (rank 1 when there is one), so that
// (Ir with N tasks - Ir with 0) / N is the cost of one task. Warm-up and window marks run in
// every variant, so their costs cancel too.
int run_fixed(long long sync_n, long long async_n, const weft::TaskOptions& where, bool remote,
              bool warm, bool int_arg) {
  auto async_burst = [&] {
    if (int_arg) {  // an argument block to send and a value to return
      std::vector<weft::ObjectRef<int>> refs;
      refs.reserve(async_n);
      for (long long i = 0; i < async_n; ++i)
        refs.push_back(weft::task(ident).options(where).remote(static_cast<int>(i)));
      for (auto& r : refs) r.get();
      return;
    }
    std::vector<weft::ObjectRef<void>> refs;
    refs.reserve(async_n);
    for (long long i = 0; i < async_n; ++i)
      refs.push_back(weft::task(noop).options(where).remote());
    for (auto& r : refs) r.get();
  };
  weft::task(noop).options(where).remote().get();
  // --fixed-warm: the same async burst once before the window, so that what a burst grows the
  // first time (hash tables' buckets, the allocator's free lists, queue nodes) is there already:
  // the steady state of a job that submits bursts again and again.
  if (warm) async_burst();
  if (remote) weft::task(callgrind_window_begin).options(where).remote().get();
  callgrind_window_begin();
  auto c0 = weft::bench::alloc_count();
  for (long long i = 0; i < sync_n; ++i) weft::task(noop).options(where).remote().get();
  async_burst();  // its refs die at its end
  // Queued after the releases above, so they are done inside the window.
  weft::task(remote ? callgrind_window_end : noop).options(where).remote().get();
  auto c = weft::bench::alloc_count() - c0;
  callgrind_window_end();
  std::printf("weft_microbench fixed: %lld sync + %lld async tasks, %llu allocations on rank 0\n",
              sync_n, async_n, static_cast<unsigned long long>(c.allocs));
  return 0;
}

struct AllocRow {
  const char* path;
  weft::bench::AllocCount count;
  int tasks;
};

void print_allocs(weft::bench::Report& rep, const std::vector<AllocRow>& rows) {
  std::printf(
      "\nheap allocations per task (C++ operator new in rank 0's process only: the driver, "
      "its runtime threads and tasks it runs; other ranks are not counted)\n");
  std::printf("%-34s %12s %12s\n", "path", "allocs/task", "bytes/task");
  for (const AllocRow& r : rows) {
    double a = double(r.count.allocs) / r.tasks, b = double(r.count.bytes) / r.tasks;
    std::printf("%-34s %12.2f %12.1f\n", r.path, a, b);
    rep.add({"weft", std::string("allocs_per_task_") + r.path, a, "allocs", -1,
             "rank 0 only, C++ operator new"});
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = weft::bench::has_flag(argc, argv, "--quick");
  std::string json = weft::bench::json_path(argc, argv);
  const long long fixed_sync = weft::bench::int_flag(argc, argv, "--fixed-sync", -1);
  const long long fixed_async = weft::bench::int_flag(argc, argv, "--fixed-async", -1);
  const bool fixed = fixed_sync >= 0 || fixed_async >= 0;
  const bool fixed_warm = weft::bench::has_flag(argc, argv, "--fixed-warm");
  const bool fixed_int_arg = weft::bench::has_flag(argc, argv, "--fixed-int-arg");
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int world;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  // Rank 1 gets a resource only it has, so "remote" rows really cross ranks; rank 0 one for
  // the same-rank rows.
  setenv("WEFT_RESOURCES", "0:here=100000;1:there=100000", 0);

  const int scale = quick ? 1 : 5;
  int my_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  double mpi_rtt = fixed ? 0 : mpi_pingpong_rtt_us(20000);
  double tbb_rate = my_rank == 0 && !fixed ? tbb_task_group_rate(200000 * scale) : 0;
  double memcpy_100m = my_rank == 0 && !fixed ? memcpy_gbps(size_t(100) << 20) : 0;

  int code;
  {
    weft::Runtime rt(&argc, &argv);
    if (!rt.is_driver()) {
      code = rt.serve();
    } else if (fixed) {
      weft::TaskOptions where{.num_cpus = 0, .resources = {{world > 1 ? "there" : "here", 1}}};
      code = run_fixed(std::max(0LL, fixed_sync), std::max(0LL, fixed_async), where, world > 1,
                       fixed_warm, fixed_int_arg);
      rt.set_exit_code(code);
    } else {
      weft::bench::Report rep;
      rep.add({"baseline", "mpi_pingpong_rtt", mpi_rtt, "us"});
      rep.add({"baseline", "tbb_task_group_empty", tbb_rate, "per_s"});
      rep.add({"baseline", "memcpy_100MiB", memcpy_100m, "GB_per_s"});
      weft::TaskOptions remote{.num_cpus = 0, .resources = {{"there", 1}}};
      weft::TaskOptions local{.num_cpus = 0, .resources = {{"here", 1}}};
      bool multi = world > 1;
      const weft::TaskOptions& far = multi ? remote : local;

      // Warm up every path once.
      weft::task(noop).options(far).remote().get();
      weft::task(noop).options(local).remote().get();

      int n = 2000 * scale;
      // Allocations are read around the timed loops; the counter is sharded, so it costs them
      // little.
      std::vector<AllocRow> allocs;
      auto c0 = weft::bench::alloc_count();
      double sync = rate(n, [&] {
        for (int i = 0; i < n; ++i) weft::task(noop).options(far).remote().get();
      });
      rep.compare("single_client_tasks_sync", sync, "per_s", "1/mpi_pingpong_rtt",
                  mpi_rtt > 0 ? 1e6 / mpi_rtt : 0);
      rep.compare("task_sync_rtt", 1e6 / sync, "us", "mpi_pingpong_rtt", mpi_rtt);
      allocs.push_back({"task_sync", weft::bench::alloc_count() - c0, n});

      n = 20000 * scale;
      c0 = weft::bench::alloc_count();
      double async = rate(n, [&] {
        std::vector<weft::ObjectRef<void>> refs;
        refs.reserve(n);
        for (int i = 0; i < n; ++i) refs.push_back(weft::task(noop).remote());
        for (auto& r : refs) r.get();
      });
      rep.compare("single_client_tasks_async", async, "per_s", "target 1e6/s", 1e6);
      allocs.push_back({"tasks_async", weft::bench::alloc_count() - c0, n});

      // The same with an int argument: a block without refs moves from the call to the
      // executor's item, where a copy cost an allocation a task.
      c0 = weft::bench::alloc_count();
      double async_arg = rate(n, [&] {
        std::vector<weft::ObjectRef<int>> refs;
        refs.reserve(n);
        for (int i = 0; i < n; ++i) refs.push_back(weft::task(ident).remote(i));
        for (auto& r : refs) r.get();
      });
      rep.compare("single_client_tasks_async_int_arg", async_arg, "per_s", "target 1e6/s", 1e6);
      allocs.push_back({"tasks_async_int_arg", weft::bench::alloc_count() - c0, n});

      // What recording the timeline costs (issue #11: under 5 % of the task rate): the same
      // async batch with recording off and on, on every rank, interleaved, medians of 3 each.
      auto timeline_everywhere = [&](bool on) {
        std::set<int> done;
        weft::TaskOptions spread{.scheduling_strategy = weft::SpreadStrategy{}};
        for (int round = 0; round < 20 && static_cast<int>(done.size()) < world; ++round) {
          std::vector<weft::ObjectRef<int>> refs;
          for (int r = 0; r < world; ++r)
            refs.push_back(weft::task(set_timeline).options(spread).remote(on));
          for (int r : weft::get(refs)) done.insert(r);
        }
        weft::timeline::configure(on, 16384);
        if (static_cast<int>(done.size()) < world) std::abort();
      };
      std::vector<double> rec_off, rec_on;
      for (int round = 0; round < 3; ++round) {
        for (bool on : {false, true}) {
          timeline_everywhere(on);
          const double r = rate(n, [&] {
            std::vector<weft::ObjectRef<void>> refs;
            refs.reserve(n);
            for (int i = 0; i < n; ++i) refs.push_back(weft::task(noop).remote());
            for (auto& ref : refs) ref.get();
          });
          (on ? rec_on : rec_off).push_back(r);
        }
      }
      timeline_everywhere(true);
      std::sort(rec_off.begin(), rec_off.end());
      std::sort(rec_on.begin(), rec_on.end());
      rep.compare("tasks_async_timeline_on", rec_on[1], "per_s", "tasks_async_timeline_off",
                  rec_off[1]);

      // The same batch collected with one weft::get of the whole list (wait_some's scan).
      double async_list = rate(n, [&] {
        std::vector<weft::ObjectRef<int>> refs;
        refs.reserve(n);
        for (int i = 0; i < n; ++i) refs.push_back(weft::task(ident).remote(i));
        if (weft::get(refs).size() != refs.size()) std::abort();
      });
      rep.compare("tasks_async_get_of_list", async_list, "per_s", "single_client_tasks_async",
                  async);

      double same_rank = rate(n, [&] {
        std::vector<weft::ObjectRef<void>> refs;
        refs.reserve(n);
        for (int i = 0; i < n; ++i) refs.push_back(weft::task(noop).options(local).remote());
        for (auto& r : refs) r.get();
      });
      rep.compare("same_rank_tasks_async", same_rank, "per_s", "tbb_task_group_empty", tbb_rate);

      int clients = std::max(1, world);
      int per = 2000 * scale;
      double multi_rate = rate(clients * per, [&] {
        std::vector<weft::ObjectRef<int>> cs;
        for (int c = 0; c < clients; ++c) cs.push_back(weft::task(client).remote(per));
        weft::get(cs);
      });
      rep.compare("multi_client_tasks_async", multi_rate, "per_s", "single_client_tasks_async",
                  async);

      auto echo = weft::actor<Echo>().options({.resources = {{multi ? "there" : "here", 1}}}).remote();
      echo.task(&Echo::ping).remote(0).get();
      n = 2000 * scale;
      c0 = weft::bench::alloc_count();
      double a_sync = rate(n, [&] {
        for (int i = 0; i < n; ++i) echo.task(&Echo::ping).remote(i).get();
      });
      rep.compare("1_1_actor_calls_sync", a_sync, "per_s", "1/mpi_pingpong_rtt",
                  mpi_rtt > 0 ? 1e6 / mpi_rtt : 0);
      allocs.push_back({"actor_calls_sync", weft::bench::alloc_count() - c0, n});
      n = 20000 * scale;
      c0 = weft::bench::alloc_count();
      double a_async = rate(n, [&] {
        std::vector<weft::ObjectRef<int>> refs;
        refs.reserve(n);
        for (int i = 0; i < n; ++i) refs.push_back(echo.task(&Echo::ping).remote(i));
        for (auto& r : refs) r.get();
      });
      rep.compare("1_1_actor_calls_async", a_async, "per_s", "single_client_tasks_async", async);
      allocs.push_back({"actor_calls_async", weft::bench::alloc_count() - c0, n});

      std::vector<weft::ActorHandle<Echo>> actors;
      for (int i = 0; i < clients; ++i) actors.push_back(weft::actor<Echo>().remote());
      per = 2000 * scale;
      double nn = rate(clients * per, [&] {
        std::vector<weft::ObjectRef<int>> cs;
        for (int c = 0; c < clients; ++c) cs.push_back(weft::task(actor_client).remote(actors[c], per));
        weft::get(cs);
      });
      rep.compare("n_n_actor_calls_async", nn, "per_s", "1_1_actor_calls_async", a_async);

      n = 20000 * scale;
      std::vector<weft::ObjectRef<int>> puts;
      puts.reserve(n);
      double put_rate = rate(n, [&] {
        for (int i = 0; i < n; ++i) puts.push_back(weft::put(i));
      });
      rep.compare("single_client_put_calls", put_rate, "per_s", "tbb_task_group_empty", tbb_rate);
      auto one = weft::put(42);
      double get_rate = rate(n, [&] {
        long long s = 0;
        for (int i = 0; i < n; ++i) s += weft::get(one);
        if (s != 42LL * n) std::abort();
      });
      rep.compare("single_client_get_calls", get_rate, "per_s", "tbb_task_group_empty", tbb_rate);

      std::vector<char> big(size_t(100) << 20, 7);
      int reps = quick ? 2 : 5;
      auto t0 = Clock::now();
      for (int i = 0; i < reps; ++i) {
        auto r = weft::put(big);
      }
      double put_gbps = reps * double(big.size()) / seconds_since(t0) / 1e9;
      rep.compare("single_client_put_gigabytes", put_gbps, "GB_per_s", "memcpy_100MiB", memcpy_100m);

      std::vector<char> mib(1 << 20, 3);
      n = 200 * scale;
      double pg1 = rate(n, [&] {
        for (int i = 0; i < n; ++i) {
          auto r = weft::put(mib);
          if (weft::get(r).size() != mib.size()) std::abort();
        }
      });
      rep.compare("single_client_put_get_1MiB", pg1, "per_s", "memcpy_100MiB x100 (per_s)",
                  memcpy_100m * 1e9 / (1 << 20) / 2);
      t0 = Clock::now();
      for (int i = 0; i < reps; ++i) {
        auto r = weft::put(big);
        if (weft::get(r).size() != big.size()) std::abort();
      }
      double pg100 = reps * double(big.size()) / seconds_since(t0) / 1e9;
      rep.compare("single_client_put_get_100MiB", pg100, "GB_per_s", "memcpy_100MiB / 2",
                  memcpy_100m / 2);

      std::printf("weft_microbench: %d ranks, %s\n", world, quick ? "quick" : "full");
      rep.print();
      print_allocs(rep, allocs);
      rep.write_json(json);
      rt.set_exit_code(0);
      code = 0;
    }
  }
  MPI_Finalize();
  return code;
}
