// rl_pipeline — the shape of an RL post-training loop: a "gang" of trainer actors in one
// STRICT_PACK placement group (GPU bundles when the job has GPUs, CPU otherwise) generates
// candidate solutions; CPU verifier tasks score them in
// batches; the driver consumes scores as they finish (wait), hands them back to their trainer,
// averages the trainers' gradients (the gang's all-reduce) and steps every trainer in lockstep.
// On GPUs (built with NCCL), the trainers form an NCCL gang with weft::nccl_gang and all-reduce
// their gradients among themselves; on CPUs the driver averages them.
// The "model" is a Gaussian search distribution trained by evolution strategies to find a hidden
// vector, small enough for a laptop; the data flow is the real one.
//   mpirun -n 4 ./rl_pipeline [--trainers 2] [--iters 30] [--batches 4] [--batch-size 32]
//                             [--gpu auto|on|off]
// Prints "rl_pipeline OK reward <first> -> <last>" when training improved the mean reward.
#include <weft/weft.hpp>
#if RL_PIPELINE_NCCL
#include <cuda_runtime.h>
#include <weft/nccl.hpp>
#endif

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {
constexpr int kDim = 16;
constexpr double kSigma = 0.1;
double target(int i) { return std::sin(0.7 * i) + 0.5; }  // what the verifiers reward
}  // namespace

// One member of the trainer gang: a copy of the policy (the mean of the search distribution)
// and the noise it drew for the batches it still waits scores for.
class Trainer {
 public:
  Trainer(int member, uint64_t seed) : member_(member), rng_(seed), theta_(kDim, 0.0) {}

  // Candidates theta + sigma * eps for batch `b`: `n` vectors of kDim, flattened.
  std::vector<double> generate(int b, int n) {
    std::normal_distribution<double> z;
    std::vector<double> eps(n * kDim), out(n * kDim);
    for (int k = 0; k < n * kDim; ++k) {
      eps[k] = z(rng_);
      out[k] = theta_[k % kDim] + kSigma * eps[k];
    }
    noise_[b] = std::move(eps);
    return out;
  }
  // Scores of batch `b` arrive (in any order).
  void score(int b, std::vector<double> rewards) { rewards_[b] = std::move(rewards); }
  // This member's gradient estimate over every scored batch (normalised rewards).
  std::vector<double> gradient() {
    std::vector<double> all;
    for (auto& [b, r] : rewards_) all.insert(all.end(), r.begin(), r.end());
    double mean = 0, var = 0;
    for (double r : all) mean += r / all.size();
    for (double r : all) var += (r - mean) * (r - mean) / all.size();
    const double sd = std::sqrt(var) + 1e-12;
    std::vector<double> g(kDim, 0.0);
    for (auto& [b, r] : rewards_) {
      const auto& eps = noise_.at(b);
      for (size_t s = 0; s < r.size(); ++s)
        for (int i = 0; i < kDim; ++i) g[i] += (r[s] - mean) / sd * eps[s * kDim + i];
    }
    for (double& x : g) x /= all.size() * kSigma;
    noise_.clear();
    rewards_.clear();
    return g;
  }
  // The gang's averaged gradient: every member applies the same step, so copies stay equal.
  double step(std::vector<double> g, double lr) {
    double norm = 0;
    for (int i = 0; i < kDim; ++i) {
      theta_[i] += lr * g[i];
      norm += theta_[i] * theta_[i];
    }
    return std::sqrt(norm);
  }
  int where() const { return weft::rank(); }

  // GPU trainers: join the gang of the group this actor's bundle belongs to (member = bundle).
  int join_gang(weft::PlacementGroup pg) {
    gang_ = weft::nccl_gang(pg, {.timeout = std::chrono::seconds(60), .name = "trainers"});
    return gang_.size();
  }
  // The gang's all-reduce on the GPUs: every member averages the gradients and steps alike.
  double step_allreduced(double lr) {
    std::vector<double> g = gradient();
#if RL_PIPELINE_NCCL
    double* d = nullptr;
    if (cudaSetDevice(gang_.device()) != cudaSuccess ||
        cudaMalloc(&d, g.size() * sizeof(double)) != cudaSuccess)
      throw weft::Error("trainer " + std::to_string(member_) + ": no device memory");
    cudaMemcpy(d, g.data(), g.size() * sizeof(double), cudaMemcpyHostToDevice);
    gang_.check(ncclAllReduce(d, d, g.size(), ncclDouble, ncclSum, weft::nccl_comm(gang_),
                              cudaStreamDefault),
                "ncclAllReduce of the gradients");
    cudaMemcpy(g.data(), d, g.size() * sizeof(double), cudaMemcpyDeviceToHost);
    cudaFree(d);
    for (double& x : g) x /= gang_.size();
#else
    throw weft::Error("rl_pipeline was built without NCCL: GPU trainers cannot all-reduce");
#endif
    return step(std::move(g), lr);
  }

 private:
  int member_;
  weft::NcclGang gang_;
  std::mt19937_64 rng_;
  std::vector<double> theta_;
  std::map<int, std::vector<double>> noise_, rewards_;
};
WEFT_ACTOR(Trainer, int, uint64_t);
WEFT_REMOTE(&Trainer::generate);
WEFT_REMOTE(&Trainer::score);
WEFT_REMOTE(&Trainer::gradient);
WEFT_REMOTE(&Trainer::step);
WEFT_REMOTE(&Trainer::where);
WEFT_REMOTE(&Trainer::join_gang);
WEFT_REMOTE(&Trainer::step_allreduced);

// Verifier (CPU task): reward = minus the squared distance to the hidden target.
std::vector<double> verify(const std::vector<double>& candidates) {
  std::vector<double> r(candidates.size() / kDim);
  for (size_t s = 0; s < r.size(); ++s) {
    double d = 0;
    for (int i = 0; i < kDim; ++i) {
      double e = candidates[s * kDim + i] - target(i);
      d += e * e;
    }
    r[s] = -d;
  }
  return r;
}
WEFT_REMOTE(verify);

namespace {
std::string flag(int argc, char** argv, const char* name, const std::string& def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return def;
}

// The gang: one STRICT_PACK placement group (every trainer on one node, reserved atomically),
// one bundle per trainer, GPU bundles when asked/available. A GPU group this job can never host
// is INFEASIBLE at once; "auto" then falls back to CPU bundles.
struct Gang {
  weft::PlacementGroup pg;
  std::vector<weft::ActorHandle<Trainer>> members;
  bool on_gpu = false;
  bool nccl = false;  // the trainers all-reduce among themselves
};

weft::PlacementGroup reserve(int n, bool gpu) {
  std::map<std::string, double> bundle{{"CPU", 0.25}};
  if (gpu) bundle["GPU"] = 1;
  return weft::placement_group(std::vector<std::map<std::string, double>>(n, bundle),
                               weft::Strategy::StrictPack, {.name = "trainer-gang"});
}

Gang make_gang(int n, const std::string& gpu) {
  Gang g;
  g.on_gpu = gpu != "off";
  g.pg = reserve(n, g.on_gpu);
  if (!g.pg.wait(std::chrono::seconds(g.on_gpu ? 20 : 60))) {
    const auto st = g.pg.state();
    weft::remove_placement_group(g.pg);
    if (!g.on_gpu || gpu == "on")
      throw weft::Error("trainer gang not placed: " + std::string(weft::to_string(st.state)) +
                        ": " + st.reason);
    std::printf("no GPU gang (%s: %s); using CPU trainers\n", weft::to_string(st.state),
                st.reason.c_str());
    g.on_gpu = false;
    g.pg = reserve(n, false);
    if (!g.pg.wait(std::chrono::seconds(60)))
      throw weft::Error("trainer gang not placed: " + g.pg.state().reason);
  }
  for (int m = 0; m < n; ++m)
    g.members.push_back(weft::actor<Trainer>(m, uint64_t(1000 + m))
                            .options({.name = "trainer-" + std::to_string(m),
                                      .num_cpus = 0.25,
                                      .num_gpus = g.on_gpu ? 1.0 : 0.0,
                                      .placement_group = g.pg,
                                      .bundle_index = m})
                            .remote());
  // GPU trainers form an NCCL gang (every member joins at once; one timeout bounds it all).
  g.nccl = g.on_gpu && weft::nccl_available();
  if (g.nccl) {
    std::vector<weft::ObjectRef<int>> joined;
    for (auto& t : g.members) joined.push_back(t.task(&Trainer::join_gang).remote(g.pg));
    for (auto& j : joined) j.get();
  }
  return g;
}
}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [&] {
    const int trainers = std::stoi(flag(argc, argv, "--trainers", "2"));
    const int iters = std::stoi(flag(argc, argv, "--iters", "30"));
    const int batches = std::stoi(flag(argc, argv, "--batches", "4"));
    const int batch_size = std::stoi(flag(argc, argv, "--batch-size", "32"));
    const std::string gpu = flag(argc, argv, "--gpu", "auto");
    if (trainers < 1 || iters < 1 || batches < 1 || batch_size < 2 ||
        (gpu != "auto" && gpu != "on" && gpu != "off")) {
      std::fprintf(stderr, "rl_pipeline: bad arguments (see the header of rl_pipeline.cpp)\n");
      return 2;
    }
    Gang g = make_gang(trainers, gpu);
    auto& gang = g.members;
    std::printf("trainer gang of %d on %s (STRICT_PACK), ranks:", trainers,
                g.nccl ? "GPUs, NCCL all-reduce" : g.on_gpu ? "GPUs" : "CPUs");
    for (auto& t : gang) std::printf(" %d", t.task(&Trainer::where).remote().get());
    std::printf("\n");

    auto t0 = std::chrono::steady_clock::now();
    double first = 0, last = 0;
    for (int it = 0; it < iters; ++it) {
      // Generation and verification overlap: each verifier starts when its batch exists.
      // Verifiers are plain 1-CPU tasks; the submitter sends them where they fit beside the gang.
      struct Pending { int member, batch; };
      std::vector<weft::ObjectRef<std::vector<double>>> scores;
      std::vector<Pending> whose;
      for (int m = 0; m < trainers; ++m) {
        for (int b = 0; b < batches; ++b) {
          auto cand = gang[m].task(&Trainer::generate).remote(b, batch_size);
          scores.push_back(weft::task(verify).remote(cand));
          whose.push_back({m, b});
        }
      }
      // Consume scores as they finish; route each back to the trainer that made the batch.
      double sum = 0;
      while (!scores.empty()) {
        auto [ready, rest] = weft::wait(scores, 1);
        // ready and rest keep the order of `scores`, so one pass pairs refs with their batch.
        std::vector<Pending> still;
        size_t ri = 0;
        for (size_t k = 0; k < scores.size(); ++k) {
          if (ri < ready.size() && scores[k] == ready[ri]) {
            std::vector<double> rw = ready[ri++].get();
            for (double x : rw) sum += x;
            gang[whose[k].member].task(&Trainer::score).remote(whose[k].batch, rw);
          } else {
            still.push_back(whose[k]);
          }
        }
        scores = std::move(rest);
        whose = std::move(still);
      }
      const double mean = sum / (trainers * batches * batch_size);
      std::vector<weft::ObjectRef<double>> norms;
      if (g.nccl) {  // the gang's all-reduce, in NCCL among the trainers
        for (auto& t : gang) norms.push_back(t.task(&Trainer::step_allreduced).remote(0.05));
      } else {  // through the driver: average the members' gradients
        std::vector<weft::ObjectRef<std::vector<double>>> grads;
        for (auto& t : gang) grads.push_back(t.task(&Trainer::gradient).remote());
        std::vector<double> avg(kDim, 0.0);
        for (auto& gr : weft::get(grads))
          for (int i = 0; i < kDim; ++i) avg[i] += gr[i] / trainers;
        for (auto& t : gang) norms.push_back(t.task(&Trainer::step).remote(avg, 0.05));
      }
      auto ns = weft::get(norms);
      for (double n : ns)
        if (n != ns[0]) {
          std::printf("rl_pipeline FAILED: trainer copies diverged\n");
          return 1;
        }
      if (it == 0) first = mean;
      last = mean;
      if (it % 10 == 0 || it == iters - 1) std::printf("iter %3d  mean reward %9.4f\n", it, mean);
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%d iterations, %d verifier tasks each, in %.2f s\n", iters, trainers * batches,
                secs);
    for (auto& t : gang) weft::kill(t);
    weft::remove_placement_group(g.pg);
    if (!(last > first)) {
      std::printf("rl_pipeline FAILED reward %.4f -> %.4f (no improvement)\n", first, last);
      return 1;
    }
    std::printf("rl_pipeline OK reward %.4f -> %.4f\n", first, last);
    return 0;
  });
}
