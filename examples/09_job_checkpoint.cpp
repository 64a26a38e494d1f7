// 09 — whole-job checkpoints and requeue: a diffusion run of many steps that survives the end of
// its allocation. The driver registers what a checkpoint saves (the step, the grid, a parameters
// object and a statistics actor); on SIGUSR1 (what `sbatch --signal=B:USR1@<s>` sends before the
// time limit) its next weft::checkpoint_point() writes them to one HDF5 file and the job exits 85,
// which slurm/weft-requeue.sbatch turns into a requeue. The next run restores them by name and
// goes on: its answer is the one an uninterrupted run prints.
//   mpirun -n 4 ./09_job_checkpoint --weft-job-checkpoint-dir=ckpt     (uninterrupted)
//   mpirun -n 4 ./09_job_checkpoint --weft-job-checkpoint-dir=ckpt --step-ms=20 &
//   kill -USR1 %1; wait    # "stopped on SIGUSR1 at job checkpoint 1", exit code 85
//   mpirun -n 4 ./09_job_checkpoint --weft-job-checkpoint-dir=ckpt     (resumes; same answer)
//   WEFTJOB_APP=./09_job_checkpoint sbatch -n 4 slurm/weft-requeue.sbatch   (the same on Slurm)
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

struct Params {
  double alpha = 0.25;  // diffusion per step
  double source = 1.0;  // heat added at the left end each step
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& alpha& source;
  }
};

// One chunk of the rod, one step on: its cells and the two cells beyond its ends.
std::vector<double> advance(std::vector<double> cells, double left, double right, Params p,
                            int sleep_ms) {
  if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  std::vector<double> next(cells.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    const double l = i == 0 ? left : cells[i - 1];
    const double r = i + 1 == cells.size() ? right : cells[i + 1];
    next[i] = cells[i] + p.alpha * (l - 2 * cells[i] + r);
  }
  return next;
}
WEFT_REMOTE(advance);

// Statistics over the run: an actor, so its state is saved and restored with the job.
class Stats {
 public:
  double add(double heat) {
    total_ += heat;
    ++steps_;
    return total_;
  }
  double total() const { return total_; }
  long steps() const { return steps_; }
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& total_& steps_;
  }

 private:
  double total_ = 0;
  long steps_ = 0;
};
WEFT_ACTOR(Stats);
WEFT_REMOTE(&Stats::add);
WEFT_REMOTE(&Stats::total);
WEFT_REMOTE(&Stats::steps);

int option(const std::string& name, int def) {
  for (const auto& a : weft::args())
    if (a.rfind("--" + name + "=", 0) == 0) return std::stoi(a.substr(name.size() + 3));
  return def;
}

int main(int argc, char** argv) {
  return weft::run(argc, argv, [&] {
    const int steps = option("steps", 300), chunks = option("chunks", 4);
    const int cells = option("cells", 64), sleep_ms = option("step-ms", 0);
    const int every = option("checkpoint-every", 0);  // also a checkpoint every N steps

    int step = 0;
    std::vector<std::vector<double>> grid(chunks, std::vector<double>(cells, 0.0));
    weft::ObjectRef<Params> params = weft::put(Params{});
    weft::ActorHandle<Stats> stats;
    if (auto r = weft::restore_job()) {  // an earlier run of this job stopped at a checkpoint
      step = r->value<int>("step");
      grid = r->value<std::vector<std::vector<double>>>("grid");
      params = r->object<Params>("params");
      stats = r->actor<Stats>("stats", weft::actor<Stats>());
      std::printf("resumed from job checkpoint %llu at step %d\n",
                  static_cast<unsigned long long>(r->epoch()), step);
    } else {
      stats = weft::actor<Stats>().remote();
    }
    weft::on_job_checkpoint([&](weft::JobCheckpoint& ck) {
      ck.save("step", step);
      ck.save("grid", grid);
      ck.save("params", params);
      ck.save("stats", stats);
    });

    while (step < steps) {
      std::vector<weft::ObjectRef<std::vector<double>>> next;
      for (int c = 0; c < chunks; ++c) {
        const double left = c == 0 ? 1.0 : grid[c - 1].back();  // the left end is held hot
        const double right = c + 1 == chunks ? 0.0 : grid[c + 1].front();
        next.push_back(weft::task(advance).remote(grid[c], left, right, params, sleep_ms));
      }
      double heat = 0;
      for (int c = 0; c < chunks; ++c) {
        grid[c] = next[c].get();
        for (double v : grid[c]) heat += v;
      }
      stats.task(&Stats::add).remote(heat);
      if (step == 0) {
        std::printf("working: %d steps of %d chunks\n", steps, chunks);
        std::fflush(stdout);
      }
      ++step;  // between steps: the grid, the stats and `step` agree
      if (every > 0 && step % every == 0) weft::checkpoint_job();
      weft::checkpoint_point();  // after the stop signal: checkpoint, and the job ends here
    }
    const double total = stats.task(&Stats::total).remote().get();
    const long counted = stats.task(&Stats::steps).remote().get();
    double sum = 0;
    for (const auto& chunk : grid)
      for (double v : chunk) sum += v;
    std::printf("answer steps=%ld total=%.17g grid=%.17g\n", counted, total, sum);
    return counted == steps ? 0 : 1;
  });
}
