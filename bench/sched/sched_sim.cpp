// sched_sim: the scheduler at scale, in one process, with no runtime around it. It builds a job
// of N nodes x R ranks (one GPU per rank by default) grouped into NVLink domains, keeps the head's
// ClusterView and one PgLedger per rank, and runs:
//   1. actors:   place 40,000 {CPU: 1, GPU: 1} actors from rank 0 with pick_rank (DEFAULT);
//   2. nvlink:   create a 64-bundle NVLINK_DOMAIN group (plan + two-phase prepare/commit);
//   3. churn:    create + remove 8-bundle PACK groups;
//   4. mixed:    tasks (DEFAULT/SPREAD, fractional GPUs) interleaved with groups of every strategy.
// Each figure is printed beside its target and beside a baseline measured in the same run: a
// linear scan that checks every rank once, i.e. what one decision costs without indexes.
//
// Usage: sched_sim [--nodes N] [--ranks-per-node R] [--nodes-per-domain D] [--actors A]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "sched/pg_ledger.hpp"
#include "sched/pg_planner.hpp"
#include "sched/policy.hpp"

using namespace weft::sched;
using Clock = std::chrono::steady_clock;

namespace {

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Sim {
  ClusterView view;
  std::vector<PgLedger> ledgers;
  uint64_t next_pg = 1;

  explicit Sim(const std::vector<RankInfo>& ranks) : view(ranks) {
    ledgers.reserve(ranks.size());
    for (const auto& r : ranks) ledgers.emplace_back(r.rank, r.total, r.gpu_ids);
  }

  // The head's two-phase creation, in-process: plan, prepare on each rank, commit or roll back.
  bool create(const PgSpec& s, PgPlan* out) {
    PgPlan plan = plan_placement_group(s, view);
    if (!plan.placed()) {
      *out = std::move(plan);
      return false;
    }
    for (size_t b = 0; b < s.bundles.size(); ++b) {
      if (!ledgers[plan.ranks[b]].prepare(s.id, int(b), s.bundles[b]).ok) {
        for (size_t k = 0; k <= b; ++k) ledgers[plan.ranks[k]].rollback(s.id);
        return false;
      }
    }
    for (size_t b = 0; b < s.bundles.size(); ++b) {
      ledgers[plan.ranks[b]].commit(s.id);
      view.allocate(plan.ranks[b], s.bundles[b]);
    }
    *out = std::move(plan);
    return true;
  }
  void remove(const PgSpec& s, const PgPlan& plan) {
    for (size_t b = 0; b < s.bundles.size(); ++b) {
      ledgers[plan.ranks[b]].remove(s.id);
      view.release(plan.ranks[b], s.bundles[b]);
    }
  }
};

// Baseline: one decision without an index — check every rank's free resources once.
double linear_scan_seconds(const ClusterView& v, const ResourceSet& need, int reps) {
  auto t0 = Clock::now();
  long hits = 0;
  for (int i = 0; i < reps; ++i) {
    // fits_now reads the rank's dense row: available() would build a ResourceSet per rank
    // (the view keeps no by-name copy any more) and slow the baseline down unfairly.
    for (int r = 0; r < v.size(); ++r) hits += v.fits_now(r, need);
  }
  double s = seconds_since(t0) / reps;
  if (hits < 0) std::puts("");  // keep the loop
  return s;
}

struct Row {
  std::string name, unit;
  double figure, target, baseline;
  bool lower_is_better;
};

void print(const std::vector<Row>& rows) {
  std::printf("\n%-44s %14s %12s %8s %16s %9s\n", "figure", "measured", "target", "vs target",
              "baseline (scan)", "speedup");
  for (const Row& r : rows) {
    double vs = r.lower_is_better ? r.figure / r.target : r.target / r.figure;
    double speed = r.lower_is_better ? r.baseline / r.figure : r.figure / r.baseline;
    std::printf("%-44s %10.3f %-3s %8.3f %-3s %7.2fx %12.3f %-3s %8.1fx %s\n", r.name.c_str(),
                r.figure, r.unit.c_str(), r.target, r.unit.c_str(), vs, r.baseline, r.unit.c_str(),
                speed, vs <= 1.0 ? "ok" : "MISSED");
  }
  std::printf("(vs target: measured/target for times, target/measured for rates; <= 1 meets it)\n");
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 10000, per_node = 8, per_domain = 9, actors = 40000;
  for (int i = 1; i + 1 < argc; i += 2) {
    int v = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--nodes"))
      nodes = v;
    else if (!std::strcmp(argv[i], "--ranks-per-node"))
      per_node = v;
    else if (!std::strcmp(argv[i], "--nodes-per-domain"))
      per_domain = v;
    else if (!std::strcmp(argv[i], "--actors"))
      actors = v;
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  const int gpus_per_rank = 8 / per_node > 0 ? 8 / per_node : 1;
  std::vector<RankInfo> ranks;
  for (int n = 0; n < nodes; ++n) {
    for (int i = 0; i < per_node; ++i) {
      RankInfo r;
      r.rank = int(ranks.size());
      r.node = n;
      r.nvlink_domain = n / per_domain;
      r.total = {{"CPU", 16.0 * gpus_per_rank},
                 {"GPU", double(gpus_per_rank)},
                 {"memory", 64e9 * gpus_per_rank}};
      for (int g = 0; g < gpus_per_rank; ++g) r.gpu_ids.push_back(i * gpus_per_rank + g);
      ranks.push_back(std::move(r));
    }
  }
  auto t_build = Clock::now();
  Sim sim(ranks);
  std::printf(
      "cluster: %d nodes x %d ranks (%d GPU each), %d nodes per NVLink domain, "
      "%d ranks; built in %.3f s\n",
      nodes, per_node, gpus_per_rank, per_domain, sim.view.size(), seconds_since(t_build));
  std::vector<Row> rows;
  const ResourceSet gpu1{{"CPU", 1}, {"GPU", 1}};

  // 1. Actors.
  double scan = linear_scan_seconds(sim.view, gpu1, 3);
  std::vector<int> placed;
  placed.reserve(actors);
  auto t0 = Clock::now();
  TaskRequest actor;
  actor.need = gpu1;
  for (int a = 0; a < actors; ++a) {
    int r = pick_rank(actor, sim.view, 0);
    if (r < 0) break;
    sim.view.allocate(r, actor.need);
    placed.push_back(r);
  }
  double t_actors = seconds_since(t0);
  rows.push_back({"place " + std::to_string(placed.size()) + " actors {CPU:1,GPU:1}", "s", t_actors,
                  1.0, scan * double(placed.size()), true});

  // 2. NVLINK_DOMAIN 64-bundle groups, on the half-loaded cluster the actors left behind.
  PgSpec nv{0, std::vector<ResourceSet>(64, gpu1), Strategy::kNvlinkDomain, "nvl"};
  std::vector<double> lat, cpu;
  int nodes_used = 0;
  for (int i = 0; i < 200; ++i) {
    nv.id = sim.next_pg++;
    PgPlan plan;
    auto t = Clock::now();
    double c0 = thread_cpu_seconds();
    bool ok = sim.create(nv, &plan);
    lat.push_back(seconds_since(t));
    cpu.push_back(thread_cpu_seconds() - c0);
    if (!ok) {
      std::printf("NVLINK_DOMAIN group not placed: %s\n", plan.reason.c_str());
      break;
    }
    nodes_used = plan.nodes_used(sim.view);
    if (i % 2) sim.remove(nv, plan);  // keep half of them: later ones see a fuller cluster
  }
  size_t worst = std::max_element(lat.begin(), lat.end()) - lat.begin();
  std::printf(
      "NVLINK_DOMAIN creation #%zu: %.1f us wall, %.1f us on this thread's CPU (the rest "
      "is the machine preempting us)\n",
      worst, lat[worst] * 1e6, cpu[worst] * 1e6);
  std::sort(cpu.begin(), cpu.end());
  std::sort(lat.begin(), lat.end());
  double nv_mean = 0;
  for (double x : lat) nv_mean += x;
  nv_mean /= double(lat.size());
  std::printf(
      "NVLINK_DOMAIN 64 bundles: %zu creations, %d nodes each, median %.1f us, "
      "p99 %.1f us, max %.1f us (creation #%zu)\n",
      lat.size(), nodes_used, lat[lat.size() / 2] * 1e6, lat[lat.size() * 99 / 100] * 1e6,
      lat.back() * 1e6, worst);
  std::printf("  CPU time per creation: median %.1f us, max %.1f us\n", cpu[cpu.size() / 2] * 1e6,
              cpu.back() * 1e6);
  rows.push_back(
      {"create 64-bundle NVLINK_DOMAIN group (mean)", "ms", nv_mean * 1e3, 1.0, scan * 1e3, true});

  // 3. Create + remove churn of small PACK groups.
  PgSpec pack{0, std::vector<ResourceSet>(8, gpu1), Strategy::kPack, "pack"};
  const int churn = 20000;
  t0 = Clock::now();
  int churned = 0;
  for (int i = 0; i < churn; ++i) {
    pack.id = sim.next_pg++;
    PgPlan plan;
    if (!sim.create(pack, &plan)) break;
    sim.remove(pack, plan);
    ++churned;
  }
  double rate = churned / seconds_since(t0);
  rows.push_back({"PACK 8-bundle group create+remove", "/s", rate, 10000, 1.0 / scan, false});

  // 4. Mixed: tasks of every policy with fractional GPUs, groups of every strategy, releases.
  uint32_t seed = 7;
  auto rnd = [&] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
  struct Held {
    int rank;
    ResourceSet need;
  };
  std::vector<Held> tasks;
  std::vector<std::pair<PgSpec, PgPlan>> groups;
  const Strategy strategies[] = {Strategy::kPack, Strategy::kSpread, Strategy::kStrictPack,
                                 Strategy::kStrictSpread, Strategy::kNvlinkDomain};
  int ops = 0, queued = 0, pending = 0;
  t0 = Clock::now();
  for (int i = 0; i < 50000; ++i) {
    uint32_t k = rnd() % 100;
    if (k < 60) {
      TaskRequest t;
      t.need = {{"CPU", double(1 + rnd() % 4)}, {"GPU", (rnd() % 5) * 0.25}};
      t.policy = rnd() % 4 == 0 ? Policy::kSpread : Policy::kDefault;
      int r = pick_rank(t, sim.view, int(rnd() % sim.view.size()));
      if (r >= 0) {
        sim.view.allocate(r, t.need);
        tasks.push_back({r, t.need});
      } else {
        ++queued;
      }
    } else if (k < 85 && !tasks.empty()) {
      size_t j = rnd() % tasks.size();
      sim.view.release(tasks[j].rank, tasks[j].need);
      tasks[j] = tasks.back();
      tasks.pop_back();
    } else if (k < 95) {
      PgSpec s{sim.next_pg++, std::vector<ResourceSet>(2 + rnd() % 15, gpu1), strategies[rnd() % 5],
               ""};
      PgPlan plan;
      if (sim.create(s, &plan)) {
        groups.emplace_back(std::move(s), std::move(plan));
      } else {
        ++pending;
      }
    } else if (!groups.empty()) {
      size_t j = rnd() % groups.size();
      sim.remove(groups[j].first, groups[j].second);
      groups[j] = std::move(groups.back());
      groups.pop_back();
    }
    ++ops;
  }
  double mixed_rate = ops / seconds_since(t0);
  std::printf(
      "mixed: %d ops (%zu tasks and %zu groups held at the end, %d tasks queued, "
      "%d groups pending)\n",
      ops, tasks.size(), groups.size(), queued, pending);
  rows.push_back(
      {"mixed ops (tasks, groups, releases)", "/s", mixed_rate, 10000, 1.0 / scan, false});
  print(rows);
  return 0;
}
