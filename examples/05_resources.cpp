// 05 — resources: a task holds num_cpus CPU slots while it runs; custom resources route work to
// the ranks that have them; a request no rank can ever satisfy fails at once (InfeasibleError).
//   WEFT_RESOURCES="1:special=1" mpirun -n 4 ./05_resources
//   (or: mpirun -n 4 ./05_resources --weft-resources="1:special=1")
#include <weft/weft.hpp>

#include <chrono>
#include <cstdio>
#include <set>
#include <vector>

int where() { return weft::rank(); }
WEFT_REMOTE(where);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    // Fractional CPUs: two 0.5-CPU tasks share one slot (I/O-bound or light work).
    std::vector<weft::ObjectRef<int>> light;
    for (int i = 0; i < 8; ++i) light.push_back(weft::task(where).options({.num_cpus = 0.5}).remote());
    std::set<int> ranks;
    for (int r : weft::get(light)) ranks.insert(r);
    std::printf("8 tasks of 0.5 CPU ran on %zu rank(s)\n", ranks.size());

    // Custom resource: only ranks given "special" by WEFT_RESOURCES run these.
    std::vector<weft::ObjectRef<int>> special;
    for (int i = 0; i < 4; ++i)
      special.push_back(weft::task(where).options({.resources = {{"special", 1}}}).remote());
    try {
      std::printf("tasks needing 'special' ran on rank(s):");
      for (int r : weft::get(special)) std::printf(" %d", r);
      std::printf("\n");
    } catch (const weft::InfeasibleError& e) {
      std::printf("\nno rank has 'special' (start with WEFT_RESOURCES=1:special=1): %s\n", e.what());
    }

    // Infeasible: reported at once, naming the missing resource. A batch allocation has no
    // autoscaler, so waiting would wait forever.
    auto t0 = std::chrono::steady_clock::now();
    try {
      weft::task(where).options({.num_cpus = 1000}).remote().get(std::chrono::seconds(10));
      std::printf("unexpected: a 1000-CPU task ran\n");
      return 1;
    } catch (const weft::InfeasibleError& e) {
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - t0).count();
      std::printf("1000-CPU task: InfeasibleError after %lld ms: %s\n", (long long)ms, e.what());
    }
    return 0;
  });
}
