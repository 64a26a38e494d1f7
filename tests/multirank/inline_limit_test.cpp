// The per-owner inline limit (issue #3, src/core/inline_budget.hpp): small values a rank owns
// live in its heap only up to `inline_owner_limit`; past it they go to the node store, so a
// driver holding many small results cannot run out of memory. These suites need a small limit
// (the multirank_inline_limit ctest variant sets 1 MiB); with the default they skip.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <weft/weft.hpp>

using namespace std::chrono_literals;

namespace {

constexpr int kCount = 10000;
constexpr size_t kElems = 1024 - sizeof(uint64_t);  // encoded: 8-byte count + elements = 1 KiB

std::vector<uint8_t> small_value(uint32_t seed) {
  std::vector<uint8_t> v(kElems);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<uint8_t>(i * 7 + seed * 13 + (seed >> 8));
  return v;
}

// Remote side: a small result, produced wherever the scheduler puts it.
std::vector<uint8_t> make_small(uint32_t seed) { return small_value(seed); }
// A task that takes a whole small value as its argument and checks it.
bool check_small(const std::vector<uint8_t>& v, uint32_t seed) { return v == small_value(seed); }

weft::detail::StoreInfo info() { return weft::detail::local_store_info(); }

bool small_limit() { return info().inline_limit <= (4u << 20); }

// Frees are asynchronous (a ref's last drop may run on the loop thread): poll until `f` is back.
template <class F>
bool eventually(F f) {
  auto end = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return f();
}

}  // namespace

WEFT_REMOTE(make_small);
WEFT_REMOTE(check_small);

TEST(InlineLimit, PutsPastTheLimitMoveToTheStoreAndReadBack) {
  if (!small_limit()) GTEST_SKIP() << "needs WEFT_INLINE_OWNER_LIMIT of at most 4 MiB";
  const auto before = info();
  {
    std::vector<weft::ObjectRef<std::vector<uint8_t>>> refs;
    refs.reserve(kCount);
    for (int i = 0; i < kCount; ++i) refs.push_back(weft::put(small_value(i)));
    const auto during = info();
    EXPECT_LE(during.inline_peak, during.inline_limit);
    EXPECT_LE(during.inline_bytes, during.inline_limit);
    // 10 MiB of values against a 1 MiB limit: most of them had to go to the store.
    EXPECT_GT(during.inline_moved, before.inline_moved + kCount / 2);
    EXPECT_GT(during.num_objects, before.num_objects + kCount / 2);
    EXPECT_GT(during.primary_bytes, before.primary_bytes + kCount / 2 * 1024);
    int bad = 0;
    for (int i = 0; i < kCount; ++i) bad += weft::get(refs[i]) != small_value(i);
    EXPECT_EQ(bad, 0);
    // Values in the store still travel to tasks as arguments.
    EXPECT_TRUE(weft::task(check_small).remote(refs.back(), uint32_t(kCount - 1)).get(60s));
  }
  EXPECT_TRUE(eventually([&] { return info().inline_bytes == before.inline_bytes; }))
      << info().inline_bytes << " bytes charged, " << before.inline_bytes << " before";
  EXPECT_TRUE(eventually([&] { return info().num_objects <= before.num_objects; }))
      << info().num_objects << " store objects, " << before.num_objects << " before";
}

TEST(InlineLimit, SmallTaskResultsPastTheLimitMoveToTheStore) {
  if (!small_limit()) GTEST_SKIP() << "needs WEFT_INLINE_OWNER_LIMIT of at most 4 MiB";
  const auto before = info();
  {
    std::vector<weft::ObjectRef<std::vector<uint8_t>>> refs;
    refs.reserve(kCount);
    for (int i = 0; i < kCount; ++i) refs.push_back(weft::task(make_small).remote(uint32_t(i)));
    int bad = 0;
    for (int i = 0; i < kCount; ++i) bad += refs[i].get(60s) != small_value(i);
    EXPECT_EQ(bad, 0);
    const auto during = info();
    EXPECT_LE(during.inline_peak, during.inline_limit);
    EXPECT_GT(during.inline_moved, before.inline_moved + kCount / 2);
    EXPECT_GT(during.num_objects, before.num_objects + kCount / 2);
  }
  EXPECT_TRUE(eventually([&] { return info().inline_bytes == before.inline_bytes; }))
      << info().inline_bytes << " bytes charged, " << before.inline_bytes << " before";
  EXPECT_TRUE(eventually([&] { return info().num_objects <= before.num_objects; }))
      << info().num_objects << " store objects, " << before.num_objects << " before";
}

TEST(InlineLimit, ResultPastTheLimitWithTheStoreFullIsATypedError) {
  const char* max_objects = std::getenv("WEFT_OBJECT_STORE_MAX_OBJECTS");
  if (!small_limit() || !max_objects) GTEST_SKIP() << "needs a small limit and a small store table";
  const auto before = info();
  {
    std::vector<weft::ObjectRef<std::vector<uint8_t>>> refs;
    bool full = false;
    for (int i = 0; i < 200000 && !full; ++i) {
      try {
        refs.push_back(weft::put(small_value(i)));
      } catch (const weft::ObjectStoreFullError&) {
        full = true;
      }
    }
    ASSERT_TRUE(full) << "the store never filled after " << refs.size() << " values";
    auto r = weft::task(make_small).remote(uint32_t(1));
    try {
      r.get(60s);
      FAIL() << "expected ObjectStoreFullError";
    } catch (const weft::ObjectStoreFullError& e) {
      EXPECT_NE(std::string(e.what()).find("inline_owner_limit"), std::string::npos) << e.what();
    }
    EXPECT_LE(info().inline_peak, info().inline_limit);
  }
  EXPECT_TRUE(eventually([&] { return info().inline_bytes == before.inline_bytes; }));
  EXPECT_TRUE(eventually([&] { return info().num_objects <= before.num_objects; }));
  // Room again once the refs are gone.
  EXPECT_EQ(weft::task(make_small).remote(uint32_t(2)).get(60s), small_value(2));
}
