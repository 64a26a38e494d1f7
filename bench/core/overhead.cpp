// Per-task overhead curve: efficiency = useful work / (wall time × CPU slots) for tasks that spin
// 1 µs … 10 ms, all slots of the job kept busy. The same definition as bench/peers/common.py,
// so the peers' curves and Weft's share one chart. Baseline in the same run: the same spin loop
// executed back to back on one thread (its efficiency is 1 by definition; printed as the
// measured spin accuracy).
// Run: mpirun -n 4 <loopback flags> ./weft_overhead [--quick] [--json FILE]
#include <weft/weft.hpp>

#include <cmath>

#include "bench_util.hpp"

using weft::bench::Clock;
using weft::bench::seconds_since;

namespace {
void spin(double us) {
  auto end = Clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(us * 1000));
  while (Clock::now() < end) {
  }
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
    std::printf("%10s %10s %12s %12s\n", "task_us", "tasks", "wall_s", "efficiency");
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
      std::printf("%10.0f %10d %12.4f %12.3f\n", us, n, wall, eff);
      rep.add({"weft", "efficiency", eff, "ratio", us});
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
