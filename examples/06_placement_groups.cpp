// 06 — placement groups: reserve bundles of resources together (atomically, under a strategy),
// then run tasks and actors inside them. A group this job can never host is INFEASIBLE at once,
// with the reason.
//   mpirun -n 4 ./06_placement_groups      (add WEFT_VIRTUAL_NODES=2 to see SPREAD across nodes)
#include <weft/weft.hpp>

#include <chrono>
#include <cstdio>

using namespace std::chrono_literals;

int where() { return weft::rank(); }
WEFT_REMOTE(where);

class Learner {
 public:
  Learner() = default;
  int where() const { return weft::rank(); }
};
WEFT_ACTOR(Learner);
WEFT_REMOTE(&Learner::where);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    // Two bundles of half a CPU each, packed together where they fit.
    weft::PlacementGroup pg = weft::placement_group({{{"CPU", 0.5}}, {{"CPU", 0.5}}},
                                                    weft::Strategy::Pack, {.name = "pair"});
    if (!pg.wait(10s)) {
      std::printf("group not created: %s (%s)\n", weft::to_string(pg.state().state),
                  pg.state().reason.c_str());
      return 1;
    }
    for (const weft::BundleInfo& b : pg.bundles())
      std::printf("bundle %d -> rank %d, node %d\n", b.bundle, b.rank, b.node);

    // Work inside a bundle runs on that bundle's rank and must fit in it (0.5 CPU here).
    for (int i = 0; i < 2; ++i) {
      int r = weft::task(where)
                  .options({.num_cpus = 0.5, .placement_group = pg, .bundle_index = i})
                  .remote()
                  .get();
      std::printf("task in bundle %d ran on rank %d\n", i, r);
      if (r != pg.bundles()[i].rank) return 1;
    }
    auto learner = weft::actor<Learner>().options({.num_cpus = 0.5, .placement_group = pg, .bundle_index = 1}).remote();
    std::printf("actor in bundle 1 lives on rank %d\n", learner.task(&Learner::where).remote().get());
    weft::kill(learner);

    // STRICT_SPREAD needs one node per bundle: more bundles than ranks can never fit.
    std::vector<std::map<std::string, double>> many(weft::world_size() + 1, {{"CPU", 0.1}});
    weft::PlacementGroup wide = weft::placement_group(many, weft::Strategy::StrictSpread);
    bool placed = wide.wait(5s);
    std::printf("STRICT_SPREAD of %zu bundles: placed=%d state=%s: %s\n", many.size(), placed,
                weft::to_string(wide.state().state), wide.state().reason.c_str());
    if (placed || wide.state().state != weft::PlacementGroupState::Infeasible) return 1;

    // Removing releases the bundles; later submissions to the group fail with InfeasibleError.
    weft::remove_placement_group(pg);
    try {
      weft::task(where).options({.num_cpus = 0.5, .placement_group = pg, .bundle_index = 0}).remote().get(10s);
      std::printf("unexpected: a task ran in a removed group\n");
      return 1;
    } catch (const weft::InfeasibleError& e) {
      std::printf("after remove: InfeasibleError (%s)\n", e.what());
    }
    return 0;
  });
}
