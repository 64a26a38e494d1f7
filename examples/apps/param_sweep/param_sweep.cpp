// param_sweep — a grid search: every (learning rate, momentum) pair trains a small model
// (momentum gradient descent on the Rosenbrock valley) as one Weft task; the driver consumes
// results as they finish with wait and keeps the best. Made for batch jobs:
//   mpirun -n 4 ./param_sweep [--lr-points 8] [--momentum-points 8] [--steps 20000]
//   sbatch slurm/param-sweep.sbatch
// Rank 0 ends with a line "param_sweep OK points=<n> best_lr=... best_momentum=... loss=...".
#include <weft/weft.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

struct Trial {
  double lr = 0, momentum = 0, loss = 0;
  int rank = -1;
  int steps_run = 0;  // fewer than asked when the run diverged
};

// Final loss of momentum gradient descent from (-1.5, 2) on f(x, y) = (1-x)^2 + 100 (y-x^2)^2.
Trial train(double lr, double momentum, int steps) {
  double x = -1.5, y = 2.0, vx = 0, vy = 0;
  Trial t{lr, momentum, 0, weft::rank(), 0};
  for (; t.steps_run < steps; ++t.steps_run) {
    double gx = -2 * (1 - x) - 400 * x * (y - x * x), gy = 200 * (y - x * x);
    vx = momentum * vx - lr * gx;
    vy = momentum * vy - lr * gy;
    x += vx;
    y += vy;
    if (!std::isfinite(x) || !std::isfinite(y) || std::fabs(x) > 1e6) break;  // diverged
  }
  t.loss = (std::isfinite(x) && std::isfinite(y) && std::fabs(x) <= 1e6)
               ? (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x)
               : std::numeric_limits<double>::infinity();
  return t;
}
WEFT_REMOTE(train);

namespace {
int int_flag(int argc, char** argv, const char* name, int def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::stoi(argv[i + 1]);
  return def;
}
}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [&] {
    const int n_lr = int_flag(argc, argv, "--lr-points", 8);
    const int n_mom = int_flag(argc, argv, "--momentum-points", 8);
    const int steps = int_flag(argc, argv, "--steps", 20000);
    if (n_lr < 1 || n_mom < 1 || steps < 1) {
      std::fprintf(stderr, "param_sweep: --lr-points, --momentum-points, --steps must be >= 1\n");
      return 2;
    }
    auto t0 = std::chrono::steady_clock::now();
    std::vector<weft::ObjectRef<Trial>> pending;
    for (int i = 0; i < n_lr; ++i) {
      for (int j = 0; j < n_mom; ++j) {
        double lr = 1e-5 * std::pow(10.0, 2.0 * i / std::max(1, n_lr - 1));  // 1e-5 .. 1e-3
        double mom = 0.95 * j / std::max(1, n_mom - 1);                       // 0 .. 0.95
        pending.push_back(weft::task(train).remote(lr, mom, steps));
      }
    }
    const size_t points = pending.size();
    Trial best{0, 0, std::numeric_limits<double>::infinity()};
    size_t diverged = 0, done = 0;
    std::vector<int> per_rank(weft::world_size(), 0);
    {  // the progress line ends before the summary is printed
      weft::Progress progress("trials", points);  // on stderr, while it is a terminal
      while (!pending.empty()) {
        // Take whatever finished (at least one), so progress shows as the sweep runs.
        auto [ready, rest] = weft::wait(pending, 1);
        for (auto& r : ready) {
          Trial t = r.get();
          ++done;
          ++per_rank[t.rank];
          if (!std::isfinite(t.loss)) ++diverged;
          if (t.loss < best.loss) best = t;
        }
        pending = std::move(rest);
        progress.update(done);
      }
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%zu trials in %.2f s on %d rank(s); trials per rank:", done, secs,
                weft::world_size());
    for (int c : per_rank) std::printf(" %d", c);
    std::printf("; %zu diverged\n", diverged);
    if (done != points || !std::isfinite(best.loss)) {
      std::printf("param_sweep FAILED: no trial converged\n");
      return 1;
    }
    std::printf("param_sweep OK points=%zu best_lr=%.3g best_momentum=%.3g loss=%.3g\n", points,
                best.lr, best.momentum, best.loss);
    return 0;
  });
}
