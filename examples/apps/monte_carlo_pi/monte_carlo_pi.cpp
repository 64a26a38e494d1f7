// monte_carlo_pi — estimate pi by throwing random points at the unit square, one task per batch,
// and compare with the same sampling done serially on the driver (the baseline).
//   mpirun -n 4 ./monte_carlo_pi [--batches 64] [--samples-per-batch 1000000]
// Prints "monte_carlo_pi OK pi=<estimate> ..." when the estimate is within 4 standard errors.
#include <weft/weft.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// Points inside the quarter circle among `samples` drawn from a generator seeded by `seed`:
// seeds make the result independent of which rank ran which batch.
int64_t count_inside(uint64_t seed, int64_t samples) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int64_t inside = 0;
  for (int64_t i = 0; i < samples; ++i) {
    double x = u(gen), y = u(gen);
    inside += (x * x + y * y <= 1.0);
  }
  return inside;
}
WEFT_REMOTE(count_inside);

namespace {
int64_t flag(int argc, char** argv, const char* name, int64_t def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::stoll(argv[i + 1]);
  return def;
}
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [&] {
    const int64_t batches = flag(argc, argv, "--batches", 64);
    const int64_t per = flag(argc, argv, "--samples-per-batch", 1000000);
    if (batches < 1 || per < 1) {
      std::fprintf(stderr, "monte_carlo_pi: --batches and --samples-per-batch must be >= 1\n");
      return 2;
    }
    auto t0 = std::chrono::steady_clock::now();
    std::vector<weft::ObjectRef<int64_t>> parts;
    for (int64_t b = 0; b < batches; ++b) parts.push_back(weft::task(count_inside).remote(b + 1, per));
    const std::vector<int64_t> counts = weft::get(parts);
    int64_t inside = 0;
    for (int64_t c : counts) inside += c;
    const double t_weft = seconds_since(t0);

    // Baseline: the same batches, serially, on the driver (at most 8 batches, then scaled).
    const int64_t base_batches = std::min<int64_t>(batches, 8);
    auto t1 = std::chrono::steady_clock::now();
    int64_t base_inside = 0, weft_inside = 0;
    for (int64_t b = 0; b < base_batches; ++b) {
      base_inside += count_inside(b + 1, per);
      weft_inside += counts[b];
    }
    const double t_serial = seconds_since(t1) * double(batches) / double(base_batches);
    // Seeded batches give the same counts wherever they ran: a cheap check of the whole path.
    if (base_inside != weft_inside) {
      std::printf("monte_carlo_pi FAILED: remote batches counted %lld, the driver %lld\n",
                  (long long)weft_inside, (long long)base_inside);
      return 1;
    }

    const double n = double(batches) * double(per);
    const double p = double(inside) / n;
    const double pi = 4 * p, stderr_pi = 4 * std::sqrt(p * (1 - p) / n);
    std::printf("%lld samples on %d rank(s): %.3f s; serial baseline (extrapolated) %.3f s; "
                "speed-up %.2fx\n",
                (long long)n, weft::world_size(), t_weft, t_serial, t_serial / t_weft);
    if (std::fabs(pi - M_PI) > 4 * stderr_pi) {
      std::printf("monte_carlo_pi FAILED pi=%.6f (off by %.1f standard errors)\n", pi,
                  std::fabs(pi - M_PI) / stderr_pi);
      return 1;
    }
    std::printf("monte_carlo_pi OK pi=%.6f stderr=%.6f\n", pi, stderr_pi);
    return 0;
  });
}
