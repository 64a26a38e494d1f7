// Objects in the node store: zero-copy same-node views, cross-node pulls of every size, spilling
// several times the store's capacity with every byte checked, freeing back to zero, and the
// typed error when the spill limit is reached. Remote work targets the rank holding the custom
// resource "special" (rank 1 in the ctest variants), which lies on another node when the job is
// split into virtual nodes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <weft/weft.hpp>

#include "test_pattern.hpp"

using namespace std::chrono_literals;

namespace {

std::vector<uint8_t> pattern(uint64_t n, uint32_t seed) {
  return weft_test::pattern<uint8_t>(n, seed);
}
uint64_t mismatches(std::span<const uint8_t> v, uint32_t seed) {
  return weft_test::mismatches<uint8_t>(v, seed);
}

// Remote side.
std::vector<uint8_t> make_pattern(uint64_t n, uint32_t seed) { return pattern(n, seed); }
// Reads a borrowed ref through a view; -1 if the size is wrong.
int64_t check_borrowed(std::vector<weft::ObjectRef<std::vector<uint8_t>>> refs, uint64_t n,
                       uint32_t seed) {
  weft::View<uint8_t> v = weft::get_view(refs.at(0));
  if (v.size() != n) return -1;
  auto info = weft::detail::local_store_info();
  auto at = reinterpret_cast<uintptr_t>(v.data());
  // A stored value read on any node lies in that node's segment (a pulled secondary).
  if (n > info.inline_threshold &&
      (at < info.segment_base || at >= info.segment_base + info.segment_size))
    return -2;
  return static_cast<int64_t>(mismatches(v.span(), seed));
}
uint64_t sum_arg(const std::vector<uint8_t>& v) {
  uint64_t s = 0;
  for (uint8_t b : v) s += b;
  return s;
}
std::pair<int, uint64_t> store_objects_here() {
  return {weft::node(), weft::detail::local_store_info().num_objects};
}
int node_here() { return weft::node(); }
std::vector<uint8_t> fail_big(uint64_t) { throw std::runtime_error("no bytes today"); }
std::vector<uint8_t> slow_big(uint64_t n) {
  std::this_thread::sleep_for(300ms);
  return std::vector<uint8_t>(n);
}

class Blob {
 public:
  std::vector<uint8_t> make(uint64_t n, uint32_t seed) { return pattern(n, seed); }
};

// The rank with "special" (rank 1), or the only rank of a one-rank job.
weft::TaskOptions remote_opts() {
  weft::TaskOptions o;
  if (weft::world_size() > 1) o.resources = {{"special", 1}};
  return o;
}

uint64_t local_objects() { return weft::detail::local_store_info().num_objects; }
uint64_t remote_objects() {
  return weft::task(store_objects_here).options(remote_opts()).remote().get().second;
}

// Frees reach other nodes asynchronously: poll until `f` is back to `want` or below (a ref of an
// earlier test may still be dropped by the loop thread just after that test ended).
template <class F>
bool eventually_back_to(F f, uint64_t want) {
  auto end = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < end) {
    if (f() <= want) return true;
    std::this_thread::sleep_for(20ms);
  }
  return f() <= want;
}

}  // namespace

WEFT_REMOTE(make_pattern);
WEFT_REMOTE(check_borrowed);
WEFT_REMOTE(sum_arg);
WEFT_REMOTE(store_objects_here);
WEFT_REMOTE(node_here);
WEFT_REMOTE(fail_big);
WEFT_REMOTE(slow_big);
WEFT_ACTOR(Blob);
WEFT_REMOTE(&Blob::make);

TEST(Objects, SameNodeViewIsZeroCopyInsideTheSegment) {
  auto info = weft::detail::local_store_info();
  ASSERT_GT(info.segment_size, 0u);
  auto r = weft::put(pattern(4 << 20, 1));
  weft::View<uint8_t> a = weft::get_view(r);
  weft::View<uint8_t> b = weft::get_view(r);
  auto at = reinterpret_cast<uintptr_t>(a.data());
  EXPECT_GE(at, info.segment_base);
  EXPECT_LT(at + a.size(), info.segment_base + info.segment_size);
  EXPECT_EQ(a.data(), b.data());  // the same bytes, not two copies
  ASSERT_EQ(a.size(), 4u << 20);
  EXPECT_EQ(mismatches(a.span(), 1), 0u);
  EXPECT_EQ(weft::get(r), pattern(4 << 20, 1));
  static_assert(std::is_same_v<decltype(a.data()), const uint8_t*>, "read-only by type");
}

TEST(Objects, SmallValuesStayInlineAndStringsView) {
  auto info = weft::detail::local_store_info();
  auto small = weft::put(std::vector<int>{1, 2, 3});
  weft::View<int> v = weft::get_view(small);
  auto at = reinterpret_cast<uintptr_t>(v.data());
  EXPECT_TRUE(at < info.segment_base || at >= info.segment_base + info.segment_size);
  EXPECT_EQ(std::vector<int>(v.begin(), v.end()), (std::vector<int>{1, 2, 3}));
  std::string big(300000, 'x');
  big[12345] = 'y';
  auto s = weft::put(big);
  weft::View<char> sv = weft::get_view(s);
  EXPECT_EQ(std::string(sv.begin(), sv.end()), big);
  EXPECT_EQ(weft::get(s), big);
}

TEST(Objects, TaskResultsOfEverySizeCrossNodes) {
  int remote_node = weft::task(node_here).options(remote_opts()).remote().get();
  auto cap = weft::detail::local_store_info().capacity;
  std::vector<uint64_t> sizes = {0, 1, 4096, 100 * 1024, 100 * 1024 + 1, 1 << 20, 16 << 20};
  if (remote_node != weft::node()) sizes.push_back(256ull << 20);
  for (uint64_t n : sizes) {
    if (n > cap / 4) continue;  // the small-store variant spills instead (see below)
    uint32_t seed = static_cast<uint32_t>(n % 251);
    auto r = weft::task(make_pattern).options(remote_opts()).remote(n, seed);
    weft::View<uint8_t> v = weft::get_view(r, 60s);
    ASSERT_EQ(v.size(), n) << "size " << n;
    EXPECT_EQ(mismatches(v.span(), seed), 0u) << "size " << n;
    auto info = weft::detail::local_store_info();
    auto at = reinterpret_cast<uintptr_t>(v.data());
    if (n > info.inline_threshold) {  // read in place from this node's segment, never a heap copy
      EXPECT_TRUE(at >= info.segment_base && at < info.segment_base + info.segment_size) << n;
    }
  }
}

TEST(Objects, BorrowerOnAnotherNodePullsFromTheHolder) {
  auto cap = weft::detail::local_store_info().capacity;
  for (uint64_t n : {uint64_t(1) << 10, uint64_t(3) << 20, uint64_t(64) << 20}) {
    if (n > cap / 4) continue;
    auto r = weft::put(pattern(n, 7));
    std::vector<weft::ObjectRef<std::vector<uint8_t>>> nested{r};
    EXPECT_EQ(weft::task(check_borrowed).options(remote_opts()).remote(nested, n, 7u).get(60s), 0)
        << "size " << n;
  }
}

TEST(Objects, LargeRefArgumentsAndActorResults) {
  auto big = weft::put(pattern(2 << 20, 3));
  uint64_t want = sum_arg(pattern(2 << 20, 3));
  EXPECT_EQ(weft::task(sum_arg).options(remote_opts()).remote(big).get(60s), want);
  // The caller's only ref dies at once: the owner keeps the value until the task has read it.
  auto gone = weft::task(sum_arg).options(remote_opts()).remote(weft::put(pattern(2 << 20, 3)));
  EXPECT_EQ(gone.get(60s), want);
  auto produced = weft::task(make_pattern).options(remote_opts()).remote(uint64_t(2) << 20, 3u);
  EXPECT_EQ(weft::task(sum_arg).remote(produced).get(60s), want);
  auto blob = weft::actor<Blob>().options({.resources = remote_opts().resources}).remote();
  auto r = blob.task(&Blob::make).remote(uint64_t(5) << 20, 9u);
  EXPECT_EQ(mismatches(weft::get_view(r, 60s).span(), 9), 0u);
  weft::kill(blob);
}

TEST(Objects, StoreUsageReturnsToZeroWhenRefsDie) {
  uint64_t here0 = local_objects(), there0 = remote_objects();
  {
    std::vector<weft::ObjectRef<std::vector<uint8_t>>> refs;
    for (int i = 0; i < 4; ++i) refs.push_back(weft::put(pattern(1 << 20, i)));
    for (int i = 0; i < 4; ++i)
      refs.push_back(weft::task(make_pattern).options(remote_opts()).remote(uint64_t(1) << 20, 5u));
    for (auto& r : refs) EXPECT_EQ(weft::get_view(r, 60s).size(), 1u << 20);
    EXPECT_GT(local_objects(), here0);
  }
  EXPECT_TRUE(eventually_back_to(local_objects, here0)) << local_objects() << " vs " << here0;
  EXPECT_TRUE(eventually_back_to(remote_objects, there0)) << remote_objects() << " vs " << there0;
}

TEST(Objects, ViewErrorsAreTyped) {
  EXPECT_THROW(weft::get_view(weft::ObjectRef<std::vector<uint8_t>>()), weft::Error);
  auto failed = weft::task(fail_big).options(remote_opts()).remote(uint64_t(1) << 20);
  try {
    weft::get_view(failed, 30s);
    FAIL() << "expected TaskError";
  } catch (const weft::TaskError& e) {
    EXPECT_NE(e.message().find("no bytes today"), std::string::npos);
  }
  auto slow = weft::task(slow_big).options(remote_opts()).remote(uint64_t(1) << 20);
  EXPECT_THROW(weft::get_view(slow, 1ms), weft::GetTimeoutError);
  EXPECT_EQ(weft::get_view(slow, 30s).size(), 1u << 20);
}

// The spill suites need a small store (the objects_* ctest variants set
// WEFT_OBJECT_STORE_MEMORY); with a default-sized store they would write gigabytes.
TEST(ObjectsSpill, SeveralTimesTheCapacityEveryByteChecked) {
  auto info0 = weft::detail::local_store_info();
  if (info0.capacity > (128u << 20)) GTEST_SKIP() << "store too large to fill quickly";
  const uint64_t n = info0.capacity / 4;
  const int count = 12;  // 3 × the capacity, all alive at once
  std::vector<weft::ObjectRef<std::vector<uint8_t>>> refs;
  for (int i = 0; i < count; ++i) refs.push_back(weft::put(pattern(n, 100 + i)));
  for (int i = 0; i < count; ++i) {
    weft::View<uint8_t> v = weft::get_view(refs[i]);
    ASSERT_EQ(v.size(), n);
    EXPECT_EQ(mismatches(v.span(), 100 + i), 0u) << "object " << i;
  }
  auto info = weft::detail::local_store_info();
  EXPECT_GT(info.spills, info0.spills);
  EXPECT_GT(info.restores, info0.restores);
  refs.clear();
  EXPECT_TRUE(eventually_back_to(local_objects, info0.num_objects))
      << local_objects() << " objects vs " << info0.num_objects << " before; spilled "
      << weft::detail::local_store_info().spilled_bytes;
}

TEST(ObjectsSpill, SpillLimitGivesObjectStoreFullError) {
  auto info0 = weft::detail::local_store_info();
  const char* lim = std::getenv("WEFT_SPILL_LIMIT");
  if (!lim || info0.capacity > (128u << 20)) GTEST_SKIP() << "needs a small store and a limit";
  const uint64_t n = info0.capacity / 4;
  std::vector<weft::ObjectRef<std::vector<uint8_t>>> refs;
  bool full = false;
  for (int i = 0; i < 200 && !full; ++i) {
    try {
      refs.push_back(weft::put(std::vector<uint8_t>(n, uint8_t(i))));
    } catch (const weft::ObjectStoreFullError& e) {
      full = true;
      EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(full) << "no ObjectStoreFullError after " << refs.size() << " objects";
  refs.clear();
  EXPECT_TRUE(eventually_back_to(local_objects, info0.num_objects));
  // Room again once the refs are gone.
  EXPECT_EQ(weft::get(weft::put(std::vector<uint8_t>(n, 1))).size(), n);
}

TEST(ObjectsSpill, ResultTooLargeForStoreAndDiskIsAClearError) {
  auto info0 = weft::detail::local_store_info();
  const char* lim = std::getenv("WEFT_SPILL_LIMIT");
  if (!lim || info0.capacity > (128u << 20)) GTEST_SKIP() << "needs a small store and a limit";
  // Larger than the store and the spill limit together: nowhere to keep it on the producer.
  auto r = weft::task(make_pattern).options(remote_opts()).remote(uint64_t(300) << 20, 1u);
  try {
    weft::get_view(r, 60s);
    FAIL() << "expected ObjectStoreFullError";
  } catch (const weft::ObjectStoreFullError& e) {
    EXPECT_NE(std::string(e.what()).find("could not be stored"), std::string::npos) << e.what();
  }
}
