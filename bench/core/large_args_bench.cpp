// Large ref arguments, read in place (issue #13): a task whose argument is a ref to a stored
// std::vector<double>, taken by value (one copy: the decode from the store segment into the
// parameter) and as weft::View<double> (no copy: the view points into the segment), each beside
// a memcpy of the same bytes into a reused buffer, measured in the same run. The memcpy and the
// by-value call are timed in turn within each repetition, so a shift in the machine's load moves
// both. The View calls run in a loop of their own: right after a by-value call, a View call
// would also meet the unmapping of that call's 64 MiB parameter, which is the by-value call's
// cost, not the View's.
//
//   ./weft_large_args_bench [--quick] [--json FILE]                     (one rank: same node)
//   mpirun -n 2 -x WEFT_VIRTUAL_NODES=2 ./weft_large_args_bench         (+ rows on another node)
// (plus the loopback flags of cmake/WeftTesting.cmake).
#include <algorithm>
#include <cstring>
#include <weft/weft.hpp>

#include "bench_util.hpp"

using weft::bench::Clock;
using weft::bench::seconds_since;

namespace {

double first_by_value(std::vector<double> v) { return v.empty() ? 0 : v[v.size() / 2]; }
double first_by_view(weft::View<double> v) { return v.empty() ? 0 : v[v.size() / 2]; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median seconds of each of `fs`, timed in turn `reps` times after one warm-up call each.
template <class... F>
std::vector<double> timed_in_turn(int reps, F&&... fs) {
  (fs(), ...);
  std::vector<std::vector<double>> s(sizeof...(F));
  for (int i = 0; i < reps; ++i) {
    size_t k = 0;
    auto time_one = [&](auto& f) {
      auto t0 = Clock::now();
      f();
      s[k++].push_back(seconds_since(t0));
    };
    (time_one(fs), ...);
  }
  std::vector<double> out;
  for (auto& v : s) out.push_back(median(std::move(v)));
  return out;
}

}  // namespace

WEFT_REMOTE(first_by_value);
WEFT_REMOTE(first_by_view);

int main(int argc, char** argv) {
  const bool quick = weft::bench::has_flag(argc, argv, "--quick");
  return weft::run(argc, argv, [&] {
    weft::bench::Report rep;
    const int reps = quick ? 5 : 21;
    std::vector<int> nodes = {weft::node()};
    if (weft::num_nodes() > 1) nodes.push_back((weft::node() + 1) % weft::num_nodes());
    for (size_t mib : {1, 8, 64}) {
      const size_t n = (mib << 20) / sizeof(double);
      std::vector<double> src(n, 1.5);
      std::vector<double> dst(n);
      auto copy = [&] {
        std::memcpy(dst.data(), src.data(), n * sizeof(double));
        asm volatile("" : : "r"(dst.data()) : "memory");
      };
      auto ref = weft::put(src);
      for (int node : nodes) {
        weft::TaskOptions o;
        o.scheduling_strategy = weft::NodeAffinity{.node = node, .soft = false};
        const std::string where = node == weft::node() ? "same node" : "other node";
        const std::vector<double> t = timed_in_turn(
            reps, copy, [&] { weft::task(first_by_value).options(o).remote(ref).get(); });
        const double copy_s = t[0], val_s = t[1];
        const double view_s =
            timed_in_turn(reps, [&] { weft::task(first_by_view).options(o).remote(ref).get(); })[0];
        const std::string sz = std::to_string(mib) + " MiB";
        rep.compare("by value, " + sz + ", " + where, val_s * 1e6, "us", "memcpy " + sz,
                    copy_s * 1e6);
        rep.compare("by View, " + sz + ", " + where, view_s * 1e6, "us", "memcpy " + sz,
                    copy_s * 1e6);
      }
    }
    rep.print();
    std::printf(
        "(a task's whole round trip: submit, the argument opened in place, the body, "
        "the result; target: by value <= 1.5x one memcpy, by View flat in size)\n");
    rep.write_json(weft::bench::json_path(argc, argv));
    return 0;
  });
}
