// A borrower rank that dies gives its credits back (issue #3, refcount failure path). Run under
// `mpirun --enable-recovery -n 3` with WEFT_VIRTUAL_NODES=3 and WEFT_RESOURCES=2:victim=1: the
// driver (rank 0) puts a stored value (256 KiB) and a small one, hands their refs, nested in an
// argument, to an actor on rank 2 (another node, so UCX reports its failure), drops its own refs,
// and the actor's rank is SIGKILLed. The driver's borrow table, object table and node store must
// return to where they started within a bounded wait. Prints DEAD_BORROWER_RELEASED (and the
// figures) on success, FAILED: ... otherwise; the driver's exit code says which.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include <weft/weft.hpp>

#include "test_pattern.hpp"

using namespace std::chrono_literals;

namespace {

using Bytes = std::vector<uint8_t>;
using Refs = std::vector<weft::ObjectRef<Bytes>>;
using Nested = std::pair<std::string, Refs>;  // the refs travel inside another value

Bytes pattern(uint64_t n, uint32_t seed) { return weft_test::pattern<uint8_t>(n, seed); }
uint64_t sum_of(const Bytes& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); }

// Keeps the refs it is given; reads them (so its node pulls a copy); dies on request.
class Keeper {
 public:
  int keep(Nested n) {
    held_ = std::move(n.second);
    return static_cast<int>(held_.size());
  }
  uint64_t sum_held() {
    uint64_t s = 0;
    for (const auto& r : held_) s += sum_of(r.get(60s));
    return s;
  }
  int die() {
    raise(SIGKILL);
    return 0;
  }

 private:
  Refs held_;
};

struct Figures {
  size_t objects, borrowed, store_objects, store_used;
  std::string str() const {
    return "{objects " + std::to_string(objects) + ", borrowed " + std::to_string(borrowed) +
           ", store objects " + std::to_string(store_objects) + ", store used " +
           std::to_string(store_used) + " B}";
  }
};
Figures figures() {
  auto t = weft::detail::ref_table_info();
  auto s = weft::detail::local_store_info();
  return {t.objects, t.borrowed, s.num_objects, s.used};
}
bool at_most(const Figures& now, const Figures& base) {
  return now.objects <= base.objects && now.borrowed <= base.borrowed &&
         now.store_objects <= base.store_objects && now.store_used <= base.store_used;
}

int fail(const std::string& why) {
  std::printf("FAILED: %s\n", why.c_str());
  std::fflush(stdout);
  return 1;
}

int drive() {
  if (weft::world_size() != 3)
    return fail("needs 3 ranks, got " + std::to_string(weft::world_size()));
  const Figures base = figures();
  const uint64_t big_n = 256 << 10;  // above the inline threshold: a primary in the driver's store
  auto big = weft::put(pattern(big_n, 1));
  auto small = weft::put(pattern(64, 2));  // inline: lives in the driver's heap
  std::weak_ptr<weft::detail::ObjectState> big_w = big.state(), small_w = small.state();
  const uint64_t want = sum_of(pattern(big_n, 1)) + sum_of(pattern(64, 2));

  weft::ActorOptions on_victim;
  on_victim.resources = {{"victim", 1}};
  auto keeper = weft::actor<Keeper>().options(on_victim).remote();
  if (keeper.rank() != 2) return fail("the keeper sits on rank " + std::to_string(keeper.rank()));
  if (weft::node() == 2) return fail("rank 2 shares the driver's node: run with 3 virtual nodes");
  if (keeper.task(&Keeper::keep).remote(Nested{"two refs", Refs{big, small}}).get(60s) != 2)
    return fail("the keeper did not get both refs");
  if (keeper.task(&Keeper::sum_held).remote().get(60s) != want)
    return fail("the keeper read wrong values");
  const Figures lent = figures();
  big = {};
  small = {};
  std::this_thread::sleep_for(200ms);
  if (big_w.expired() || small_w.expired())
    return fail("a value was freed while the keeper on rank 2 still holds its ref");
  if (figures().borrowed < base.borrowed + 2)
    return fail("the borrow table does not count the keeper: " + figures().str());

  // The keeper's rank dies; nobody will ever release its credits.
  auto t0 = std::chrono::steady_clock::now();
  keeper.task(&Keeper::die).remote();  // no reply will come; the ref goes at once
  bool released = false;
  while (!released && std::chrono::steady_clock::now() - t0 < 30s) {
    released = big_w.expired() && small_w.expired() && at_most(figures(), base);
    if (!released) std::this_thread::sleep_for(10ms);
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!released)
    return fail("after " + std::to_string(static_cast<int>(ms)) + " ms the driver holds " +
                figures().str() + " (start " + base.str() + ", lent " + lent.str() +
                (big_w.expired() ? "" : ", the stored value lives") +
                (small_w.expired() ? "" : ", the small value lives") + ")");
  std::printf("DEAD_BORROWER_RELEASED after %.1f ms: start %s, lent %s, now %s\n", ms,
              base.str().c_str(), lent.str().c_str(), figures().str().c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace

WEFT_ACTOR(Keeper);
WEFT_REMOTE(&Keeper::keep);
WEFT_REMOTE(&Keeper::sum_held);
WEFT_REMOTE(&Keeper::die);

int main(int argc, char** argv) {
  int code = weft::run(argc, argv, drive);
  std::printf("rank exit code %d\n", code);
  std::fflush(stdout);
  return code;
}
