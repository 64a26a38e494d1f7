// Control bytes per live ref (DESIGN §4: "a few integers and ids", target <= 200 B; Ray's is
// ~4-5 KB per ref per DESIGN.md, as context). Creates N refs (1,000,000 by default) and
// measures the allocator's bytes in use (mallinfo2, all arenas) and the process RSS
// (/proc/self/statm) before and after, for:
//   put(int)                 small values owned inline by the driver
//   task results, pending    right after N submissions of a task returning an int (a mix of
//                            calls the loop has not taken yet and calls it queued: timing decides)
//   task results, queued     N submitted while one task holds the rank's only CPU slot, sampled
//                            once the heap stops moving: every task has its in-flight entry and
//                            waits at the gate (deterministic; the bench sets WEFT_NUM_CPUS=1)
//   task results, finished   once every result arrived
// Heap bytes per ref are split into the value's own bytes (4) and the rest (control state:
// ObjectState, shared_ptr control blocks, the object table's slots, the inline payload holder
// and its vector's allocation). Bytes in the node store (values moved there past
// inline_owner_limit) are reported apart. The ref handles' own vector is allocated before the
// baseline, so only the runtime's state is counted. A breakdown by component, each measured by
// allocating N of it alone, says where the bytes go.
//
//   ./weft_ref_footprint [--n N] [--json FILE]          (one rank; or under mpirun, driver rank)
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "bench_util.hpp"
#include "common/handoff_pool.hpp"
#include "common/open_hash_map.hpp"

using weft::bench::Clock;
using weft::bench::seconds_since;

namespace {

int ident(int x) { return x; }

// Holds the rank's only CPU slot until released, so that submitted tasks wait at the gate.
std::atomic<bool> g_release{false};
int hold() {
  while (!g_release.load(std::memory_order_acquire))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return 0;
}

struct Mem {
  double heap = 0;  // bytes handed out by malloc (arenas + mmapped chunks)
  double rss = 0;
};

Mem sample() {
  Mem m;
  struct mallinfo2 mi = mallinfo2();
  m.heap = static_cast<double>(mi.uordblks + mi.hblkhd);
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  m.rss = static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
  return m;
}

// Frees reach the table from the loop thread; let the runtime settle before sampling.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

// Samples until the heap has stopped moving (the loop has taken every call): two samples 200 ms
// apart within 0.1 %, or 30 s.
Mem settled() {
  Mem prev = sample();
  for (int i = 0; i < 150; ++i) {
    settle();
    const Mem m = sample();
    if (std::abs(m.heap - prev.heap) <= 0.001 * m.heap) return m;
    prev = m;
  }
  return prev;
}

size_t arg_n(int argc, char** argv, size_t def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--n") return std::strtoull(argv[i + 1], nullptr, 10);
  return def;
}

struct Line {
  std::string name;
  double value;
  std::string unit, base_name;
  double base;
};

// Heap bytes per object of N allocations made by `make` (kept alive in `keep`).
template <class T, class F>
double per_object(size_t n, F make) {
  std::vector<T> keep;
  keep.reserve(n);
  const Mem m0 = sample();
  for (size_t i = 0; i < n; ++i) keep.push_back(make(i));
  return (sample().heap - m0.heap) / double(n);
}

}  // namespace

WEFT_REMOTE(ident);
WEFT_REMOTE(hold);

int main(int argc, char** argv) {
  setenv("WEFT_NUM_CPUS", "1", /*overwrite=*/0);  // one slot: hold() keeps the queue's tasks waiting
  weft::Runtime rt(&argc, &argv);
  if (!rt.is_driver()) return rt.serve();
  const size_t n = arg_n(argc, argv, 1000000);
  std::vector<Line> lines;
  weft::bench::Report rep;
  auto row = [&](const std::string& name, double v, const std::string& unit,
                 const std::string& base_name, double base) {
    lines.push_back({name, v, unit, base_name, base});
    rep.add({"weft", name, v, unit});
  };
  const double kTarget = 200, kRay = 4500;  // bytes per ref: DESIGN §4 target; Ray (context)
  double put_heap = 0;                      // heap bytes per put(int) ref, for the breakdown

  // --- put(int): N small values owned inline ---
  {
    std::vector<weft::ObjectRef<int>> refs;
    refs.reserve(n);
    settle();
    const Mem m0 = sample();
    const auto s0 = weft::detail::local_store_info();
    const auto t0 = Clock::now();
    for (size_t i = 0; i < n; ++i) refs.push_back(weft::put(static_cast<int>(i)));
    const double secs = seconds_since(t0);
    const Mem m1 = sample();
    const auto s1 = weft::detail::local_store_info();
    if (weft::get(refs[n - 1]) != static_cast<int>(n - 1)) std::abort();
    const double heap = (m1.heap - m0.heap) / double(n);
    put_heap = heap;
    row("put(int): heap bytes per ref", heap, "B", "target", kTarget);
    row("put(int): control bytes per ref", heap - sizeof(int), "B", "target", kTarget);
    row("put(int): control bytes per ref", heap - sizeof(int), "B", "Ray (context)", kRay);
    row("put(int): RSS bytes per ref", (m1.rss - m0.rss) / double(n), "B", "target", kTarget);
    row("put(int): store bytes per ref", double(s1.used - s0.used) / double(n), "B", "-", 0);
    row("put(int): rate", double(n) / secs / 1e6, "M/s", "-", 0);
    std::printf(
        "put(int): %zu refs, %.1f MB heap, inline budget %zu / %zu bytes, %llu values "
        "moved to the store\n",
        n, (m1.heap - m0.heap) / 1e6, s1.inline_bytes, s1.inline_limit,
        (unsigned long long)(s1.inline_moved - s0.inline_moved));
  }
  settle();

  // --- task results: pending right after submission, then finished ---
  {
    std::vector<weft::ObjectRef<int>> refs;
    refs.reserve(n);
    settle();
    const Mem m0 = sample();
    const auto t0 = Clock::now();
    for (size_t i = 0; i < n; ++i) refs.push_back(weft::task(ident).remote(static_cast<int>(i)));
    const double submit_s = seconds_since(t0);
    const Mem m1 = sample();
    size_t pending = 0;
    for (const auto& r : refs) pending += !r.ready();
    long long sum = 0;
    for (const auto& r : refs) sum += r.get();
    if (sum != (long long)n * (long long)(n - 1) / 2) std::abort();
    settle();
    const Mem m2 = sample();
    row("task results just submitted: heap B/ref", (m1.heap - m0.heap) / double(n), "B", "target",
        kTarget);
    row("task results finished: heap B/ref", (m2.heap - m0.heap) / double(n), "B", "target",
        kTarget);
    row("task results finished: control B/ref", (m2.heap - m0.heap) / double(n) - sizeof(int), "B",
        "target", kTarget);
    row("task results finished: RSS B/ref", (m2.rss - m0.rss) / double(n), "B", "target", kTarget);
    row("task submit rate", double(n) / submit_s / 1e6, "M/s", "-", 0);
    std::printf("tasks: %zu submitted in %.2f s, %zu still pending when sampled\n", n, submit_s,
                pending);
  }

  // --- task results queued behind a task that holds the only slot ---
  {
    std::vector<weft::ObjectRef<int>> refs;
    refs.reserve(n);
    settle();
    g_release = false;
    weft::ObjectRef<int> holder = weft::task(hold).remote();
    const Mem m0 = settled();
    for (size_t i = 0; i < n; ++i) refs.push_back(weft::task(ident).remote(static_cast<int>(i)));
    const Mem m1 = settled();
    size_t pending = 0;
    for (const auto& r : refs) pending += !r.ready();
    g_release = true;
    weft::get(holder);
    long long sum = 0;
    for (const auto& r : refs) sum += r.get();
    if (sum != (long long)n * (long long)(n - 1) / 2) std::abort();
    row("task results queued (not run): heap B/ref", (m1.heap - m0.heap) / double(n), "B",
        "target", kTarget);
    std::printf("queued: %zu submitted behind a held slot, %zu pending when sampled\n", n,
                pending);
  }
  settle();

  // --- where the bytes go: each component allocated N times alone ---
  {
    using weft::detail::ObjectState;
    const size_t k = std::min<size_t>(n, 200000);
    // The runtime's own shapes: a state and its control block in one recycled block
    // (core::new_state), and the object table's 64 shards of open-addressing slots, at most half
    // full, so their bytes per entry move between 1 and 2 slots with N (measured at N itself).
    const double state = per_object<std::shared_ptr<ObjectState>>(k, [](size_t i) {
      return std::allocate_shared<ObjectState>(weft::HandoffAllocator<ObjectState>(),
                                               weft::ObjectId{0, 0, i});
    });
    const double plain = per_object<std::shared_ptr<const weft::detail::Payload>>(k, [](size_t) {
      return std::make_shared<weft::detail::InlinePayload>(std::vector<char>(sizeof(int)));
    });
    constexpr size_t kShards = 64;  // as core/object_table.hpp
    std::vector<weft::OpenHashMap<weft::ObjectId, std::weak_ptr<ObjectState>>> shards(kShards);
    const Mem m0 = sample();
    for (size_t i = 0; i < n; ++i) {
      const weft::ObjectId id{0, 0, i};
      shards[std::hash<weft::ObjectId>{}(id) % kShards].try_emplace(id);
    }
    const double node = (sample().heap - m0.heap) / double(n);
    std::printf(
        "\nwhere the bytes go (heap per object, %zu allocated alone):\n"
        "  ObjectState + shared_ptr control block  %6.1f B  (sizeof ObjectState %zu, ErrorInfo "
        "%zu)\n"
        "  object table slots (N entries)           %6.1f B  (%zu B a slot)\n"
        "  owned inline payload (the rest of put)   %6.1f B  (value in place up to 24 B)\n"
        "  for scale: InlinePayload + 4-B vector    %6.1f B  (sizeof InlinePayload %zu)\n"
        "  ref handle held by the caller            %6zu B  (not counted above)\n",
        k, state, sizeof(ObjectState), sizeof(weft::detail::ErrorInfo), node,
        sizeof(weft::ObjectId) + sizeof(std::weak_ptr<ObjectState>), put_heap - state - node, plain,
        sizeof(weft::detail::InlinePayload), sizeof(weft::ObjectRef<int>));
  }

  std::printf("\n%-44s %12s %-5s %-16s %12s %8s\n", "benchmark", "weft", "unit", "baseline",
              "baseline", "ratio");
  for (const auto& l : lines) {
    if (l.base > 0)
      std::printf("%-44s %12.1f %-5s %-16s %12.1f %8.2f\n", l.name.c_str(), l.value, l.unit.c_str(),
                  l.base_name.c_str(), l.base, l.unit == "B" ? l.base / l.value : l.value / l.base);
    else
      std::printf("%-44s %12.3f %-5s\n", l.name.c_str(), l.value, l.unit.c_str());
  }
  std::printf("(bytes: ratio = baseline / weft, > 1 means under the baseline)\n");
  rep.write_json(weft::bench::json_path(argc, argv));
  return 0;
}
