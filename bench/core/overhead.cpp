// Per-task overhead curve: efficiency = useful work / (wall time × CPU slots) for tasks that spin
// 1 µs … 10 ms, all slots of the job kept busy. The same definition as bench/peers/common.py,
// so the peers' curves and Weft's share one chart. Baselines in the same run:
// - the same spin loop run back to back by as many bare threads as the job has slots, with no
//   runtime at all (system "bare"): what the cores allow. With 4 slots on 2 cores, two spinning
//   bodies wait for a core at any moment, and this curve shows the resulting ceiling;
// - the spin loop back to back on one thread (its efficiency is 1 by definition; printed as the
//   measured spin accuracy).
// Run: mpirun -n 4 <loopback flags> ./weft_overhead [--quick] [--json FILE]
#include <weft/weft.hpp>

#include <cmath>
#include <thread>
#include <vector>

#include "bench_util.hpp"

using weft::bench::Clock;
using weft::bench::seconds_since;

namespace {
void spin(double us) {
  auto end = Clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(us * 1000));
  while (Clock::now() < end) {
  }
}
// Efficiency of `slots` bare threads each spinning tasks of `us` back to back for `budget_s`.
double bare_efficiency(int slots, double budget_s, double us) {
  const int per = std::max(1, static_cast<int>(budget_s * 1e6 / us));
  auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < slots; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < per; ++i) spin(us);
    });
  for (auto& t : threads) t.join();
  return per * slots * us * 1e-6 / (seconds_since(t0) * slots);
}
}  // namespace
WEFT_REMOTE(spin);

int main(int argc, char** argv) {
  bool quick = weft::bench::has_flag(argc, argv, "--quick");
  std::string json = weft::bench::json_path(argc, argv);
  return weft::run(argc, argv, [&] {
    const double sizes[] = {1, 3, 10, 30, 100, 300, 1000, 3000, 10000};
    // One CPU slot per rank unless configured otherwise.
    int slots = weft::world_size();
    double budget_s = quick ? 0.3 : 1.0;
    weft::bench::Report rep;
    std::printf("weft_overhead: %d ranks, %d CPU slots\n", weft::world_size(), slots);
    std::printf("%10s %10s %12s %12s %14s %12s\n", "task_us", "tasks", "wall_s", "efficiency",
                "bare_threads", "weft/bare");
    double first50 = -1, first90 = -1;
    for (double us : sizes) {
      int n = static_cast<int>(std::clamp(budget_s * slots * 1e6 / us, 200.0, 50000.0));
      weft::task(spin).remote(us).get();
      auto t0 = Clock::now();
      std::vector<weft::ObjectRef<void>> refs;
      refs.reserve(n);
      for (int i = 0; i < n; ++i) refs.push_back(weft::task(spin).remote(us));
      for (auto& r : refs) r.get();
      double wall = seconds_since(t0);
      double eff = n * us * 1e-6 / (wall * slots);
      // The ceiling of the cores, measured right after, on half the budget.
      double bare = bare_efficiency(slots, budget_s / 2, us);
      std::printf("%10.0f %10d %12.4f %12.3f %14.3f %12.3f\n", us, n, wall, eff, bare, eff / bare);
      rep.add({"weft", "efficiency", eff, "ratio", us});
      rep.add({"bare", "efficiency", bare, "ratio", us});
      if (first50 < 0 && eff >= 0.5) first50 = us;
      if (first90 < 0 && eff >= 0.9) first90 = us;
    }
    // Baseline: the spin itself, serially on the driver.
    auto t0 = Clock::now();
    for (int i = 0; i < 1000; ++i) spin(100);
    double acc = 1000 * 100e-6 / seconds_since(t0);
    rep.add({"baseline", "spin_accuracy_serial_100us", acc, "ratio"});
    std::printf("serial spin baseline efficiency (100 us): %.3f\n", acc);
    std::printf("smallest task size reaching 50%%: %s us, 90%%: %s us\n",
                first50 < 0 ? "none" : std::to_string(first50).c_str(),
                first90 < 0 ? "none" : std::to_string(first90).c_str());
    rep.write_json(json);
    return 0;
  });
}
