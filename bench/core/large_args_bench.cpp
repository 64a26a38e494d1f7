// Large ref arguments, read in place (issue #13): a task whose argument is a ref to a stored
// std::vector<double>, taken by value (one copy: the decode from the store segment into the
// parameter) and as weft::View<double> (no copy: the view points into the segment), each beside
// a memcpy of the same bytes into a reused buffer, measured in the same run.
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

// Median seconds of `reps` calls of `f`, after one warm-up call.
template <class F>
double timed(int reps, F&& f) {
  f();
  std::vector<double> s;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    f();
    s.push_back(seconds_since(t0));
  }
  return median(s);
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
      const double copy_s = timed(reps, [&] {
        std::memcpy(dst.data(), src.data(), n * sizeof(double));
        asm volatile("" : : "r"(dst.data()) : "memory");
      });
      auto ref = weft::put(std::move(src));
      for (int node : nodes) {
        weft::TaskOptions o;
        o.scheduling_strategy = weft::NodeAffinity{.node = node, .soft = false};
        const std::string where = node == weft::node() ? "same node" : "other node";
        const double val_s =
            timed(reps, [&] { weft::task(first_by_value).options(o).remote(ref).get(); });
        const double view_s =
            timed(reps, [&] { weft::task(first_by_view).options(o).remote(ref).get(); });
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
