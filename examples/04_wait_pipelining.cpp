// 04 — wait: consume results as they finish instead of in submission order, and keep a bounded
// number of tasks in flight (pipelining).
//   mpirun -n 4 ./04_wait_pipelining
#include <weft/weft.hpp>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

// Work whose duration varies: later items are quicker, so they finish first.
int slow_square(int x, int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return x * x;
}
WEFT_REMOTE(slow_square);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const int items = 24, in_flight = 6;
    std::vector<weft::ObjectRef<int>> pending;
    int next = 0, done = 0;
    long sum = 0;
    auto submit = [&] {
      int ms = 5 + 10 * ((items - next) % 4);
      pending.push_back(weft::task(slow_square).remote(next, ms));
      ++next;
    };
    while (next < in_flight) submit();
    std::printf("finished:");
    while (!pending.empty()) {
      // Returns as soon as one is ready; `ready` keeps the order of `pending`.
      auto [ready, rest] = weft::wait(pending, /*num_returns=*/1);
      for (auto& r : ready) {
        sum += r.get();
        ++done;
      }
      std::printf(" %zu", ready.size());
      pending = std::move(rest);
      while (next < items && static_cast<int>(pending.size()) < in_flight) submit();
    }
    std::printf("\n%d results consumed with at most %d in flight; sum of squares = %ld\n", done,
                in_flight, sum);
    // A timeout makes wait return early with what is ready so far.
    auto late = weft::task(slow_square).remote(3, 300);
    auto [r, p] = weft::wait({late}, 1, std::chrono::milliseconds(10));
    std::printf("wait with a 10 ms timeout: %zu ready, %zu pending\n", r.size(), p.size());
    late.get();
    long expect = 0;
    for (int i = 0; i < items; ++i) expect += long(i) * i;
    return (sum == expect && done == items) ? 0 : 1;
  });
}
