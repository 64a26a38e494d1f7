// Distributed reference counting (the borrower protocol): an object whose ref travelled to
// other ranks lives exactly as long as some ref to it lives anywhere, then its owner's state dies
// and every copy is freed. Remote work targets the rank holding the custom resource "special"
// (rank 1 in the ctest variants; another node when the job is split into virtual nodes).
// Releases are asynchronous: checks poll with a bounded wait and say what they saw.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <numeric>
#include <thread>
#include <weft/weft.hpp>

#include "test_pattern.hpp"

using namespace std::chrono_literals;

namespace {

using Bytes = std::vector<uint8_t>;
using Refs = std::vector<weft::ObjectRef<Bytes>>;
// A value that holds refs (and, when large, lies in the store and travels by location).
using Outer = std::pair<Refs, Bytes>;

Bytes pattern(uint64_t n, uint32_t seed) { return weft_test::pattern<uint8_t>(n, seed); }
uint64_t sum_of(const Bytes& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); }

// Keeps refs it is given past the call that gave them, reads them, drops them on request.
class Keeper {
 public:
  int keep(Refs refs) {
    held_.insert(held_.end(), refs.begin(), refs.end());
    return static_cast<int>(held_.size());
  }
  uint64_t sum_held() {
    uint64_t s = 0;
    for (const auto& r : held_) s += sum_of(r.get(60s));
    return s;
  }
  int keep_inner(std::vector<weft::ObjectRef<Outer>> outers) {
    for (const auto& o : outers) {
      Outer v = o.get(60s);
      held_.insert(held_.end(), v.first.begin(), v.first.end());
    }
    return static_cast<int>(held_.size());
  }
  int drop() {
    held_.clear();
    return 0;
  }

 private:
  Refs held_;
};

int hand_to_keeper(weft::ActorHandle<Keeper> k, Refs refs) {
  return k.task(&Keeper::keep).remote(refs).get(60s);
}
// The chain: A passes the refs to B (another task), which gives them to the keeper.
int chain_b(weft::ActorHandle<Keeper> k, Refs refs) {
  return k.task(&Keeper::keep).remote(refs).get(60s);
}
int chain_a(weft::ActorHandle<Keeper> k, Refs refs) {
  return weft::task(chain_b).remote(k, refs).get(60s);
}
// Objects owned by the executing rank, returned inside the result.
Refs make_refs(int n, uint64_t size) {
  Refs out;
  for (int i = 0; i < n; ++i) out.push_back(weft::put(pattern(size, static_cast<uint32_t>(i))));
  return out;
}
int64_t count_refs(std::vector<weft::ObjectRef<int64_t>> refs) {
  int64_t s = 0;
  for (size_t i = 0; i < refs.size() && i < 50; ++i) s += refs[i].get(60s);  // a few borrowed reads
  return static_cast<int64_t>(refs.size()) * 1000000 + s;
}
uint64_t sum_nested(Refs refs) {
  uint64_t s = 0;
  for (const auto& r : refs) s += sum_of(r.get(60s));
  return s;
}
// This rank's tables: {object states, borrow-table entries, store objects on its node}.
std::vector<uint64_t> tables_here() {
  auto t = weft::detail::ref_table_info();
  return {t.objects, t.borrowed, weft::detail::local_store_info().num_objects};
}
Refs hand_back(Refs refs) { return refs; }
uint64_t sum_outer(std::vector<weft::ObjectRef<Outer>> outers) {
  uint64_t s = 0;
  for (const auto& o : outers) {
    Outer v = o.get(60s);
    for (const auto& r : v.first) s += sum_of(r.get(60s));
  }
  return s;
}

weft::TaskOptions special() {
  weft::TaskOptions o;
  if (weft::world_size() > 1) o.resources = {{"special", 0.5}};  // beside one keeper
  return o;
}
weft::ActorOptions special_actor() {
  weft::ActorOptions o;
  if (weft::world_size() > 1) o.resources = {{"special", 0.5}};  // beside one keeper
  return o;
}
std::vector<uint64_t> remote_tables() {
  return weft::task(tables_here).options(special()).remote().get(60s);
}
std::vector<uint64_t> local_tables() { return tables_here(); }

// Polls `f` until it holds or `limit` passes.
template <class F>
bool eventually(F f, std::chrono::milliseconds limit = 20s) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return f();
}
// Every table figure back to (at most) the baseline's.
bool back_to(const std::vector<uint64_t>& now, const std::vector<uint64_t>& base) {
  for (size_t i = 0; i < base.size(); ++i)
    if (now[i] > base[i]) return false;
  return true;
}
std::string show(const std::vector<uint64_t>& v) {
  std::string s = "{objects " + std::to_string(v[0]) + ", borrowed " + std::to_string(v[1]) +
                  ", store objects " + std::to_string(v[2]) + "}";
  return s;
}

}  // namespace

WEFT_ACTOR(Keeper);
WEFT_REMOTE(&Keeper::keep);
WEFT_REMOTE(&Keeper::sum_held);
WEFT_REMOTE(&Keeper::drop);
WEFT_REMOTE(&Keeper::keep_inner);
WEFT_REMOTE(hand_to_keeper);
WEFT_REMOTE(chain_a);
WEFT_REMOTE(chain_b);
WEFT_REMOTE(make_refs);
WEFT_REMOTE(count_refs);
WEFT_REMOTE(sum_nested);
WEFT_REMOTE(tables_here);
WEFT_REMOTE(hand_back);
WEFT_REMOTE(sum_outer);

TEST(Refcount, NestedArgumentKeptByAnActorPastTheTaskThenFreed) {
  auto base = local_tables();
  const uint64_t n = 1 << 20;  // above the inline threshold: a primary in the driver's store
  auto big = weft::put(pattern(n, 1));
  std::weak_ptr<weft::detail::ObjectState> owner_state = big.state();
  auto keeper = weft::actor<Keeper>().options(special_actor()).remote();
  ASSERT_EQ(weft::task(hand_to_keeper).options(special()).remote(keeper, Refs{big}).get(60s), 1);
  big = {};
  // The task is over and the driver dropped its ref: the actor's borrow keeps the value.
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(owner_state.expired()) << "freed while an actor on another rank still holds it";
  EXPECT_EQ(keeper.task(&Keeper::sum_held).remote().get(60s), sum_of(pattern(n, 1)));
  EXPECT_EQ(keeper.task(&Keeper::drop).remote().get(60s), 0);
  EXPECT_TRUE(eventually([&] { return owner_state.expired(); }))
      << "the owner's state outlived the last borrower's ref";
  EXPECT_TRUE(eventually([&] { return back_to(local_tables(), base); }))
      << "driver " << show(local_tables()) << " vs " << show(base);
  weft::kill(keeper);
}

TEST(Refcount, RefsReturnedInsideAResultAreFreedEverywhereOnceDropped) {
  auto remote_base = remote_tables();
  auto base = local_tables();
  {
    Refs refs = weft::task(make_refs).options(special()).remote(3, uint64_t(1) << 20).get(60s);
    ASSERT_EQ(refs.size(), 3u);
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(sum_of(refs[i].get(60s)), sum_of(pattern(1 << 20, i))) << "ref " << i;
    // The returned refs outlive the task: the owner still counts the driver.
    EXPECT_GE(remote_tables()[1], remote_base[1] + (weft::world_size() > 1 ? 3 : 0));
  }
  EXPECT_TRUE(eventually([&] { return back_to(remote_tables(), remote_base); }))
      << "owner rank " << show(remote_tables()) << " vs " << show(remote_base);
  EXPECT_TRUE(eventually([&] { return back_to(local_tables(), base); }))
      << "driver " << show(local_tables()) << " vs " << show(base);
}

TEST(Refcount, ChainThroughTwoTasksIntoAnActorStaysReadableUntilDropped) {
  // A keeper on the last rank (the others are placed, then killed): in np4 the chain is
  // driver (0) → task A (1) → task B (anywhere) → actor (3).
  std::vector<weft::ActorHandle<Keeper>> spare;
  auto keeper = weft::actor<Keeper>().remote();
  // Actors go to the rank with the fewest placed by this driver (earlier suites placed some).
  for (int i = 0; i < 64 && keeper.rank() != weft::world_size() - 1; ++i) {
    spare.push_back(keeper);
    keeper = weft::actor<Keeper>().remote();
  }
  for (auto& s : spare) weft::kill(s);
  EXPECT_EQ(keeper.rank(), weft::world_size() - 1) << "the keeper should sit on the last rank";
  auto base = local_tables();
  const uint64_t n = 256 << 10;
  auto ref = weft::put(pattern(n, 4));
  auto small = weft::put(pattern(100, 5));  // inline: lives in the owner's heap
  std::weak_ptr<weft::detail::ObjectState> big_state = ref.state(), small_state = small.state();
  ASSERT_EQ(weft::task(chain_a).options(special()).remote(keeper, Refs{ref, small}).get(60s), 2);
  ref = {};
  small = {};
  const uint64_t want = sum_of(pattern(n, 4)) + sum_of(pattern(100, 5));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(keeper.task(&Keeper::sum_held).remote().get(60s), want) << "read " << i;
    EXPECT_FALSE(big_state.expired() || small_state.expired()) << "freed while the actor holds it";
    std::this_thread::sleep_for(30ms);
  }
  EXPECT_EQ(keeper.task(&Keeper::drop).remote().get(60s), 0);
  EXPECT_TRUE(eventually([&] { return big_state.expired() && small_state.expired(); }))
      << "the owner's states outlived the chain's last ref";
  EXPECT_TRUE(eventually([&] { return back_to(local_tables(), base); }))
      << "driver " << show(local_tables()) << " vs " << show(base);
  weft::kill(keeper);
}

TEST(Refcount, TenThousandEscapedRefsDieAndTheTablesReturnToTheirSize) {
  auto remote_base = remote_tables();
  auto base = local_tables();
  {
    std::vector<weft::ObjectRef<int64_t>> refs;
    for (int64_t i = 0; i < 10000; ++i) refs.push_back(weft::put(i));
    int64_t want = 10000 * 1000000ll + 49 * 50 / 2;
    EXPECT_EQ(weft::task(count_refs).options(special()).remote(refs).get(60s), want);
    // Twice, and once more through a result that carries them back.
    EXPECT_EQ(weft::task(count_refs).options(special()).remote(refs).get(60s), want);
    EXPECT_GE(local_tables()[0], 10000u);
  }
  EXPECT_TRUE(eventually([&] { return back_to(local_tables(), base); }))
      << "driver " << show(local_tables()) << " vs " << show(base);
  EXPECT_TRUE(eventually([&] { return back_to(remote_tables(), remote_base); }))
      << "remote " << show(remote_tables()) << " vs " << show(remote_base);
}

TEST(Refcount, StoreUsageReturnsToZeroAfterEscapedRefsDie) {
  auto remote_base = remote_tables();
  auto base = local_tables();
  {
    Refs puts;
    for (int i = 0; i < 3; ++i) puts.push_back(weft::put(pattern(1 << 20, 10 + i)));
    uint64_t want = 0;
    for (int i = 0; i < 3; ++i) want += sum_of(pattern(1 << 20, 10 + i));
    // Read on the other rank (a pulled copy when it is on another node) ...
    EXPECT_EQ(weft::task(sum_nested).options(special()).remote(puts).get(60s), want);
    // ... and refs owned by the other rank, read here, then passed back to it.
    Refs theirs = weft::task(make_refs).options(special()).remote(2, uint64_t(1) << 20).get(60s);
    EXPECT_EQ(weft::task(sum_nested).options(special()).remote(theirs).get(60s),
              sum_of(pattern(1 << 20, 0)) + sum_of(pattern(1 << 20, 1)));
    EXPECT_EQ(sum_nested(theirs), sum_of(pattern(1 << 20, 0)) + sum_of(pattern(1 << 20, 1)));
    // A value that itself holds refs: put, read elsewhere, dropped.
    auto outer = weft::put(puts);
    EXPECT_EQ(weft::task(sum_nested).options(special()).remote(outer).get(60s), want);
  }
  EXPECT_TRUE(eventually([&] { return back_to(local_tables(), base); }))
      << "driver " << show(local_tables()) << " vs " << show(base);
  EXPECT_TRUE(eventually([&] { return back_to(remote_tables(), remote_base); }))
      << "remote " << show(remote_tables()) << " vs " << show(remote_base);
}

TEST(Refcount, RefBackAtItsOwnerResolvesToTheSameState) {
  auto r = weft::put(pattern(64, 3));
  // The ref goes to the other rank and comes back inside a result: the same local state.
  auto echo = weft::task(hand_back).options(special()).remote(Refs{r}).get(60s);
  ASSERT_EQ(echo.size(), 1u);
  EXPECT_EQ(echo[0].state(), r.state());
  EXPECT_EQ(sum_of(echo[0].get()), sum_of(pattern(64, 3)));
}

TEST(Refcount, ARefSerializedByHandIsKeptUntilTheJobEnds) {
  // No Weft message carries these bytes, so nobody can count their reader: the state stays.
  const size_t pinned0 = weft::detail::ref_table_info().pinned;
  auto r = weft::put(int64_t{7});
  std::weak_ptr<weft::detail::ObjectState> state = r.state();
  std::vector<char> bytes = weft::serde::to_bytes(r);
  r = {};
  EXPECT_FALSE(state.expired()) << "a ref serialized by hand lost its value";
  EXPECT_EQ(weft::detail::ref_table_info().pinned, pinned0 + 1);
  auto back = weft::serde::from_bytes<weft::ObjectRef<int64_t>>(bytes);
  EXPECT_EQ(back.get(60s), 7);
}

TEST(Refcount, RefsInsideABorrowedValueAreBorrowedWithIt) {
  auto remote_base = remote_tables();
  auto base = local_tables();
  auto keeper = weft::actor<Keeper>().options(special_actor()).remote();
  std::weak_ptr<weft::detail::ObjectState> a, b, small_w, big_w;
  const uint64_t one = sum_of(pattern(1 << 20, 20)) + sum_of(pattern(64, 21));
  {
    Refs inner{weft::put(pattern(1 << 20, 20)), weft::put(pattern(64, 21))};
    a = inner[0].state();
    b = inner[1].state();
    auto small_outer = weft::put(Outer{inner, {}});                   // inline: kObjectValue
    auto big_outer = weft::put(Outer{inner, Bytes(200 << 10, 1)});  // stored: kObjectLocation
    small_w = small_outer.state();
    big_w = big_outer.state();
    inner.clear();  // only the outer values hold the inner refs now
    std::vector<weft::ObjectRef<Outer>> outers{small_outer, big_outer};
    EXPECT_EQ(weft::task(sum_outer).options(special()).remote(outers).get(60s), 2 * one);
    EXPECT_EQ(sum_outer(outers), 2 * one);
    // The keeper reads the outer values and keeps only the refs inside them.
    EXPECT_EQ(keeper.task(&Keeper::keep_inner).remote(outers).get(60s), 4);
  }
  // Every outer value is gone; the inner refs live on in the keeper, borrowed through the
  // values it read.
  EXPECT_TRUE(eventually([&] { return small_w.expired() && big_w.expired(); }))
      << "the outer values outlived their refs";
  EXPECT_FALSE(a.expired() || b.expired()) << "an inner ref died while the keeper holds it";
  EXPECT_EQ(keeper.task(&Keeper::sum_held).remote().get(60s), 2 * one);
  EXPECT_EQ(keeper.task(&Keeper::drop).remote().get(60s), 0);
  EXPECT_TRUE(eventually([&] { return a.expired() && b.expired(); }))
      << "the inner refs outlived the keeper's refs";
  EXPECT_TRUE(eventually([&] { return back_to(local_tables(), base); }))
      << "driver " << show(local_tables()) << " vs " << show(base);
  EXPECT_TRUE(eventually([&] { return back_to(remote_tables(), remote_base); }))
      << "remote " << show(remote_tables()) << " vs " << show(remote_base);
  weft::kill(keeper);
}
