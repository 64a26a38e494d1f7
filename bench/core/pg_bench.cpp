// Placement-group create + wait + remove rate through the runtime (driver → head → ranks'
// ledgers, two-phase), beside the pure planner + ledger doing the same reservations in-process
// on the same cluster shape (the floor the protocol adds messages to).
//   mpirun -n 4 ./weft_pg_bench [groups]
#include <weft/weft.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "sched/pg_ledger.hpp"
#include "sched/pg_planner.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The runtime's rank shape as the head sees it: world_size ranks, each CPU = 1 (the bench's
// bundles are tiny, so the shape only matters for the planner's indexes).
double planner_rate(int ranks, int groups) {
  std::vector<weft::sched::RankInfo> info(ranks);
  for (int r = 0; r < ranks; ++r) {
    info[r].rank = r;
    info[r].node = r;
    info[r].nvlink_domain = r;
    info[r].total = weft::sched::ResourceSet{{"CPU", 1}};
  }
  weft::sched::ClusterView view(info);
  std::vector<weft::sched::PgLedger> ledgers;
  for (const auto& r : info) ledgers.emplace_back(r.rank, r.total, std::vector<int>{});
  weft::sched::PgSpec spec;
  spec.strategy = weft::sched::Strategy::kPack;
  spec.bundles = {weft::sched::ResourceSet{{"CPU", 0.1}}, weft::sched::ResourceSet{{"CPU", 0.1}}};
  auto t0 = Clock::now();
  for (int i = 0; i < groups; ++i) {
    spec.id = i + 1;
    auto plan = weft::sched::plan_placement_group(spec, view);
    if (!plan.placed()) std::abort();
    std::set<int> touched(plan.ranks.begin(), plan.ranks.end());
    for (size_t b = 0; b < spec.bundles.size(); ++b)
      ledgers[plan.ranks[b]].prepare(spec.id, static_cast<int>(b), spec.bundles[b]);
    for (int r : touched) ledgers[r].commit(spec.id);
    for (size_t b = 0; b < spec.bundles.size(); ++b) view.allocate(plan.ranks[b], spec.bundles[b]);
    for (int r : touched) ledgers[r].remove(spec.id);
    for (size_t b = 0; b < spec.bundles.size(); ++b) view.release(plan.ranks[b], spec.bundles[b]);
  }
  return groups / std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [&] {
    int groups = argc > 1 ? std::atoi(argv[1]) : 2000;
    // Warm up the path (first messages set up endpoints).
    for (int i = 0; i < 20; ++i) {
      auto pg = weft::placement_group({{{"CPU", 0.1}}, {{"CPU", 0.1}}}, weft::Strategy::Pack);
      pg.wait(std::chrono::seconds(10));
      pg.remove();
    }
    auto t0 = Clock::now();
    for (int i = 0; i < groups; ++i) {
      auto pg = weft::placement_group({{{"CPU", 0.1}}, {{"CPU", 0.1}}}, weft::Strategy::Pack);
      if (!pg.wait(std::chrono::seconds(10))) {
        std::fprintf(stderr, "group %d not created: %s\n", i, pg.state().reason.c_str());
        return 1;
      }
      pg.remove();
    }
    double rt = groups / std::chrono::duration<double>(Clock::now() - t0).count();
    double base = planner_rate(weft::world_size(), groups * 10);
    std::printf("%-44s %14s %14s %8s\n", "placement groups (2 bundles, PACK)", "weft /s",
                "baseline /s", "ratio");
    std::printf("%-44s %14.0f %14.0f %8.4f\n", "create+wait+remove vs in-process plan+ledger", rt,
                base, rt / base);
    std::printf("ranks %d, groups %d (baseline: planner + PgLedger two-phase, no messages)\n",
                weft::world_size(), groups);
    return 0;
  });
}
