// Dependent work: tasks whose arguments are other tasks' results (ObjectRefs resolved before the
// task runs), beside the same work written with raw MPI in the same binary, run before the
// runtime starts:
//   - a chain of tasks, each taking the previous result: per-link latency vs the MPI ping-pong
//     round trip (8 bytes, ranks 0 and 1);
//   - a 1-D stencil of width W and T timesteps, task (i, t) taking (i-1, i, i+1) of step t-1
//     (clamped), each spinning for a fixed body: step time vs an MPI halo-exchange stencil.
// Efficiency = (W × body × T / available parallelism) / wall, where available parallelism =
// min(W, CPU slots, cores) — slots as the runtime counts them by default (cores per rank, at
// least 1, or WEFT_NUM_CPUS), cores so that an oversubscribed machine is not counted twice.
// Run: mpirun -n 4 <loopback flags> ./weft_dependent_bench [--quick] [--steps T] [--links N]
//                                                          [--json FILE]
// Defaults: 1000 steps and 10,000 links; --quick: 100 and 2,000.
#include <mpi.h>
#include <sched.h>
#include <stdlib.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "alloc_counter.hpp"
#include "bench_util.hpp"
#include "mpi_baseline.hpp"

using weft::bench::Clock;
using weft::bench::seconds_since;
using weft::bench::mpi_pingpong_rtt_us;

namespace {

void spin(double us) {
  if (us <= 0) return;
  auto end = Clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(us * 1000));
  while (Clock::now() < end) {
  }
}

int chain_link(int x) { return x + 1; }

// One stencil cell; the arithmetic is fixed so that Weft's, MPI's and the serial result can be
// compared exactly.
double cell_value(double l, double m, double r) { return (l + m + r) / 3 + 1; }
double cell(double l, double m, double r, double body_us) {
  spin(body_us);
  return cell_value(l, m, r);
}

}  // namespace

WEFT_REMOTE(chain_link);
WEFT_REMOTE(cell);

namespace {

constexpr int kWidths[] = {2, 4, 8};
constexpr double kBodies[] = {0, 10, 100, 1000};

std::vector<double> stencil_serial(int w, int steps) {
  std::vector<double> v(w), next(w);
  for (int i = 0; i < w; ++i) v[i] = i;
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < w; ++i)
      next[i] = cell_value(v[std::max(i - 1, 0)], v[i], v[std::min(i + 1, w - 1)]);
    v.swap(next);
  }
  return v;
}

struct Parallelism {
  int slots = 1;  // Weft's CPU slots in the job
  int cores = 1;  // distinct cores over the job's nodes
  int ranks = 1;
};

// Counted with MPI before the runtime starts, the way the runtime does by default. Cores are the
// union of the node's ranks' affinity masks: mpirun may bind each rank to one core.
Parallelism measure_parallelism() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 1, local_rank = 0;
  MPI_Comm_size(node, &local);
  MPI_Comm_rank(node, &local_rank);
  cpu_set_t mine, all;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_SET(0, &mine);
  MPI_Allreduce(&mine, &all, sizeof mine, MPI_BYTE, MPI_BOR, node);
  MPI_Comm_free(&node);
  int slots = std::max(1, CPU_COUNT(&mine) / local);
  if (const char* n = getenv("WEFT_NUM_CPUS")) slots = std::max(1, atoi(n));
  int node_cores = local_rank == 0 ? CPU_COUNT(&all) : 0;
  Parallelism p;
  MPI_Allreduce(&slots, &p.slots, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&node_cores, &p.cores, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_size(MPI_COMM_WORLD, &p.ranks);
  return p;
}

// The stencil with MPI point-to-point: the first min(W, size) ranks own contiguous blocks of
// cells and swap one halo double with each neighbour per step. Returns the wall seconds (max
// over ranks); rank 0 checks the result against the serial one.
double mpi_stencil(int w, int steps, double body_us) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int active = std::min(w, size);
  const bool mine = rank < active;
  const int lo = mine ? rank * w / active : 0, hi = mine ? (rank + 1) * w / active : 0;
  // v[0] and v[n+1] are the halo cells; at the domain edge they repeat the edge cell (clamp).
  const int n = hi - lo;
  std::vector<double> v(n + 2), next(n + 2);
  for (int i = 0; i < n; ++i) v[i + 1] = lo + i;
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = Clock::now();
  for (int t = 0; mine && t < steps; ++t) {
    MPI_Request req[4];
    int k = 0;
    if (rank > 0) {
      MPI_Irecv(&v[0], 1, MPI_DOUBLE, rank - 1, t, MPI_COMM_WORLD, &req[k++]);
      MPI_Isend(&v[1], 1, MPI_DOUBLE, rank - 1, t, MPI_COMM_WORLD, &req[k++]);
    }
    if (rank + 1 < active) {
      MPI_Irecv(&v[n + 1], 1, MPI_DOUBLE, rank + 1, t, MPI_COMM_WORLD, &req[k++]);
      MPI_Isend(&v[n], 1, MPI_DOUBLE, rank + 1, t, MPI_COMM_WORLD, &req[k++]);
    }
    MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    if (rank == 0) v[0] = v[1];
    if (rank + 1 == active) v[n + 1] = v[n];
    for (int i = 1; i <= n; ++i) {
      spin(body_us);
      next[i] = cell_value(v[i - 1], v[i], v[i + 1]);
    }
    v.swap(next);
  }
  double wall = seconds_since(t0), max_wall = 0;
  MPI_Allreduce(&wall, &max_wall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  // Gather the final row on rank 0 to check it.
  std::vector<int> counts(size), displs(size);
  for (int r = 0; r < size; ++r) {
    counts[r] = r < active ? (r + 1) * w / active - r * w / active : 0;
    displs[r] = r < active ? r * w / active : 0;
  }
  std::vector<double> all(w);
  MPI_Gatherv(v.data() + 1, n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
              MPI_COMM_WORLD);
  if (rank == 0 && all != stencil_serial(w, steps)) {
    std::fprintf(stderr, "mpi_stencil: wrong result for W=%d\n", w);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return max_wall;
}

// The whole task graph is submitted at once, keeping only the previous row's refs: a task's
// arguments keep the objects it needs alive.
double weft_stencil(int w, int steps, double body_us) {
  std::vector<weft::ObjectRef<double>> row, next(w);
  for (int i = 0; i < w; ++i) row.push_back(weft::put(double(i)));
  auto t0 = Clock::now();
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < w; ++i)
      next[i] = weft::task(cell).remote(row[std::max(i - 1, 0)], row[i],
                                        row[std::min(i + 1, w - 1)], body_us);
    row.swap(next);
  }
  std::vector<double> out = weft::get(row);
  double wall = seconds_since(t0);
  if (out != stencil_serial(w, steps)) throw std::runtime_error("weft_stencil: wrong result");
  return wall;
}

struct StencilPoint {
  int w;
  double body_us, weft_s, mpi_s;
};

double efficiency(const StencilPoint& p, int steps, int par, bool weft) {
  double wall = weft ? p.weft_s : p.mpi_s;
  return p.w * p.body_us * 1e-6 * steps / par / wall;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = weft::bench::has_flag(argc, argv, "--quick");
  const std::string json = weft::bench::json_path(argc, argv);
  const int steps =
      static_cast<int>(weft::bench::int_flag(argc, argv, "--steps", quick ? 100 : 1000));
  const int links =
      static_cast<int>(weft::bench::int_flag(argc, argv, "--links", quick ? 2000 : 10000));
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);

  // Baselines first, while MPI has the machine to itself.
  const Parallelism par = measure_parallelism();
  const double mpi_rtt = mpi_pingpong_rtt_us(quick ? 5000 : 20000);
  std::vector<StencilPoint> points;
  for (int w : kWidths)
    for (double body : kBodies) points.push_back({w, body, 0, mpi_stencil(w, steps, body)});

  int code = weft::run(argc, argv, [&] {
    weft::bench::Report rep;
    std::printf("weft_dependent_bench: %d ranks, %d CPU slots, %d cores, %d steps, %d links\n",
                par.ranks, par.slots, par.cores, steps, links);

    // Chain: link k waits for link k-1's result, wherever the scheduler put either.
    weft::task(chain_link).remote(weft::task(chain_link).remote(0)).get();  // warm-up
    auto c0 = weft::bench::alloc_count();
    auto t0 = Clock::now();
    weft::ObjectRef<int> last = weft::put(0);
    for (int k = 0; k < links; ++k) last = weft::task(chain_link).remote(last);
    const int end = last.get();
    const double link_us = seconds_since(t0) * 1e6 / links;
    const auto chain_allocs = weft::bench::alloc_count() - c0;
    if (end != links) throw std::runtime_error("chain: wrong result");
    rep.add({"baseline", "mpi_pingpong_rtt", mpi_rtt, "us"});
    rep.compare("chain_per_link_latency", link_us, "us", "mpi_pingpong_rtt", mpi_rtt);

    for (StencilPoint& p : points) {
      weft_stencil(p.w, std::min(steps, 10), p.body_us);  // warm-up
      p.weft_s = weft_stencil(p.w, steps, p.body_us);
      std::string name = "stencil_w" + std::to_string(p.w) + "_body" +
                         std::to_string(static_cast<int>(p.body_us)) + "us_step";
      rep.compare(name, p.weft_s * 1e6 / steps, "us", "mpi_p2p", p.mpi_s * 1e6 / steps);
      rep.add({"baseline", name, p.mpi_s * 1e6 / steps, "us"});
    }
    rep.print();

    if (mpi_rtt > 0)
      std::printf("\nchain: per-link latency / MPI ping-pong RTT = %.1f\n", link_us / mpi_rtt);
    else
      std::printf("\nchain: no MPI ping-pong with 1 rank\n");
    std::printf(
        "chain: %.1f heap allocations and %.0f bytes per link (C++ operator new in rank 0's "
        "process only: the driver, its runtime threads and links it ran; other ranks not "
        "counted)\n",
        double(chain_allocs.allocs) / links, double(chain_allocs.bytes) / links);
    rep.add({"weft", "allocs_per_task_chain_link", double(chain_allocs.allocs) / links, "allocs",
             -1, "rank 0 only, C++ operator new"});

    std::printf("\nstencil (%d steps): step time and efficiency, Weft beside MPI point-to-point\n",
                steps);
    std::printf("%4s %8s %6s %12s %12s %10s %10s %11s\n", "W", "body_us", "par", "weft_us/step",
                "mpi_us/step", "weft/mpi", "weft_eff", "mpi_eff");
    for (int w : kWidths) {
      const int weft_par = std::min({w, par.slots, par.cores});
      const int mpi_par = std::min({w, par.ranks, par.cores});
      double weft50 = -1, mpi50 = -1;
      for (const StencilPoint& p : points) {
        if (p.w != w) continue;
        double we = efficiency(p, steps, weft_par, true), me = efficiency(p, steps, mpi_par, false);
        std::printf("%4d %8.0f %3d/%-2d %12.2f %12.2f %10.2f %10.3f %11.3f\n", w, p.body_us,
                    weft_par, mpi_par, p.weft_s * 1e6 / steps, p.mpi_s * 1e6 / steps,
                    p.weft_s / p.mpi_s, we, me);
        if (p.body_us > 0) {
          std::string name = "stencil_w" + std::to_string(w) + "_body" +
                             std::to_string(static_cast<int>(p.body_us)) + "us_efficiency";
          rep.add({"weft", name, we, "ratio", p.body_us});
          rep.add({"baseline", name, me, "ratio", p.body_us});
        }
        if (weft50 < 0 && p.body_us > 0 && we >= 0.5) weft50 = p.body_us;
        if (mpi50 < 0 && p.body_us > 0 && me >= 0.5) mpi50 = p.body_us;
      }
      auto fmt = [](double us) {
        return us < 0 ? std::string("none") : std::to_string(int(us)) + " us";
      };
      std::printf("     W=%d smallest body reaching 50%% efficiency: weft %s, mpi %s\n", w,
                  fmt(weft50).c_str(), fmt(mpi50).c_str());
    }
    std::printf("(par = available parallelism weft/mpi: min(W, CPU slots or ranks, cores))\n");
    rep.write_json(json);
    return 0;
  });
  MPI_Finalize();
  return code;
}
