// stuck_job MARKERS — a job that is stuck on purpose, for the `weft` CLI tests (cli_*.sh): on
// rank 0, which alone has the custom resource `special` (WEFT_RESOURCES=0:special=1),
//   - "holder" takes special=1 and holds it until MARKERS/release exists;
//   - "waiter" needs special=1 too: it waits at rank 0's gate for it;
//   - "after-holder" takes the holder's result: it waits for that argument;
//   - "impossible" needs nosuch=2, which no rank has: it fails as infeasible;
//   - the group "wants-special" needs special=1: it is PENDING while the holder runs;
// and on rank 3, which alone has `other` (WEFT_RESOURCES="0:special=1;3:other=1"), a task
// "outer" holds other=1 and submits "inner-waiter", which needs other=1 too: it waits at rank
// 3's gate, a reason only rank 3 knows (rank 0 gathers it). Before all that, 8 "warm-up" tasks
// spread over every rank, so each rank's timeline has spans.
// Then it writes MARKERS/ready and waits; after the release every result is checked, and the
// exit code says whether all came out right.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <weft/weft.hpp>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

bool wait_for_file(const std::string& path, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!fs::exists(path)) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

void touch(const std::string& path) { std::ofstream(path) << "1\n"; }

int hold_special(std::string markers) {
  touch(markers + "/started");
  return wait_for_file(markers + "/release", 300s) ? 1 : -1;
}
int use_special() { return 2; }
int add_one(int x) { return x + 1; }
int use_other() { return 3; }
WEFT_REMOTE(use_other);

// On rank 3: queues a task behind itself at its own gate, and hands back its ref.
std::vector<weft::ObjectRef<int>> outer(std::string markers) {
  weft::TaskOptions o;
  o.num_cpus = 0;
  o.resources = {{"other", 1}};
  o.name = "inner-waiter";
  auto inner = weft::task(use_other).options(o).remote();
  touch(markers + "/outer-started");
  wait_for_file(markers + "/release", 300s);
  return {inner};
}

}  // namespace

WEFT_REMOTE(hold_special);
WEFT_REMOTE(use_special);
WEFT_REMOTE(add_one);
WEFT_REMOTE(outer);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [&]() -> int {
    if (argc < 2) {
      std::fprintf(stderr, "usage: stuck_job MARKERS\n");
      return 2;
    }
    const std::string markers = argv[1];
    weft::TaskOptions spread;
    spread.scheduling_strategy = weft::SpreadStrategy{};
    spread.name = "warm-up";
    std::vector<weft::ObjectRef<int>> warm;
    for (int i = 0; i < 8; ++i) warm.push_back(weft::task(add_one).options(spread).remote(i));
    int warm_sum = 0;
    for (int v : weft::get(warm)) warm_sum += v;
    // The rank-3 part needs 4 ranks (cli_two_jobs.sh runs 2).
    const bool four = weft::world_size() >= 4;
    weft::TaskOptions on_other;
    on_other.num_cpus = 0;
    on_other.resources = {{"other", 1}};
    on_other.name = "outer";
    std::optional<weft::ObjectRef<std::vector<weft::ObjectRef<int>>>> outer_ref;
    if (four) outer_ref = weft::task(outer).options(on_other).remote(markers);
    weft::TaskOptions special;
    special.num_cpus = 0;
    special.resources = {{"special", 1}};
    special.name = "holder";
    auto held = weft::task(hold_special).options(special).remote(markers);
    if (!wait_for_file(markers + "/started", 120s)) {
      std::fprintf(stderr, "stuck_job: the holder never started\n");
      return 3;
    }
    special.name = "waiter";
    auto waiter = weft::task(use_special).options(special).remote();
    weft::TaskOptions after;
    after.name = "after-holder";
    auto child = weft::task(add_one).options(after).remote(held);
    weft::TaskOptions impossible;
    impossible.name = "impossible";
    impossible.resources = {{"nosuch", 2}};
    bool infeasible = false;
    try {
      weft::task(use_special).options(impossible).remote().get(60s);
    } catch (const weft::InfeasibleError&) {
      infeasible = true;
    }
    auto pg =
        weft::placement_group({{{"special", 1}}}, weft::Strategy::Pack, {.name = "wants-special"});
    if (four && !wait_for_file(markers + "/outer-started", 120s)) {
      std::fprintf(stderr, "stuck_job: the outer task never started on rank 3\n");
      return 3;
    }
    touch(markers + "/ready");
    if (!wait_for_file(markers + "/release", 300s)) return 4;
    const int h = held.get(120s), w = waiter.get(120s), c = child.get(120s);
    int in = 3;
    if (four) {
      const std::vector<weft::ObjectRef<int>> inner = outer_ref->get(120s);
      in = inner.size() == 1 ? inner[0].get(120s) : -1;
    }
    // The holder is done: the group fits now (or once the waiter is done).
    const bool placed = pg.wait(60s);
    weft::remove_placement_group(pg);
    const bool ok = infeasible && h == 1 && w == 2 && c == 2 && placed && in == 3 && warm_sum == 36;
    if (!ok)
      std::fprintf(stderr,
                   "stuck_job: infeasible=%d holder=%d waiter=%d child=%d placed=%d inner=%d "
                   "warm-up=%d\n",
                   infeasible, h, w, c, placed, in, warm_sum);
    return ok ? 0 : 5;
  });
}
