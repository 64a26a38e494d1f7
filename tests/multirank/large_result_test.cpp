// Large task and actor-call results written straight into the node store
// (detail::put_result_direct): a result whose encoding is its bytes (a raw value, a vector or
// string of raw elements) and that is above inline_threshold is copied once, from the body's
// value into the store, with no heap buffer of its size in between. Its own program, because it
// replaces the global operator new to count allocations of that size (big_alloc_count.cpp). Run
// on one rank (multirank_large_results_np1), where every allocation of a call is this process's,
// and on two virtual nodes.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>
#include <weft/weft.hpp>

using namespace std::chrono_literals;

// Allocations of at least 32 MiB so far (big_alloc_count.cpp, which replaces operator new).
uint64_t big_allocs();

namespace {

std::vector<uint64_t> big_words(uint64_t words, uint64_t seed) {
  std::vector<uint64_t> v(words);
  for (uint64_t i = 0; i < words; ++i) v[i] = i * 0x9e3779b97f4a7c15ull + seed;
  return v;
}
std::string big_text(uint64_t n, char c) { return std::string(n, c); }

struct Block {  // raw, above the 4 KiB floor of the direct path, under inline_threshold
  std::array<uint32_t, 4096> a;
};
Block block(uint32_t seed) {
  Block b;
  for (uint32_t i = 0; i < b.a.size(); ++i) b.a[i] = i ^ seed;
  return b;
}

class Holder {
 public:
  std::vector<uint64_t> words(uint64_t n, uint64_t seed) { return big_words(n, seed); }
};

}  // namespace

WEFT_REMOTE(big_words);
WEFT_REMOTE(big_text);
WEFT_REMOTE(block);
WEFT_ACTOR(Holder);
WEFT_REMOTE(&Holder::words);

TEST(LargeResults, AreCopiedIntoTheStoreWithoutAHeapBufferOfTheirSize) {
  if (weft::world_size() != 1) GTEST_SKIP() << "counts this process's allocations: one rank";
  const uint64_t words = (size_t(64) << 20) / sizeof(uint64_t);
  const uint64_t before = big_allocs();
  auto r = weft::task(big_words).remote(words, uint64_t(7));
  weft::View<uint64_t> v = weft::get_view(r, 60s);
  // One: the body's own vector. Encoding it into a buffer first would make a second.
  EXPECT_EQ(big_allocs() - before, 1u);
  ASSERT_EQ(v.size(), words);
  for (uint64_t i = 0; i < words; i += 4099) ASSERT_EQ(v[i], i * 0x9e3779b97f4a7c15ull + 7) << i;
  EXPECT_EQ(v[words - 1], (words - 1) * 0x9e3779b97f4a7c15ull + 7);
  const auto info = weft::detail::local_store_info();
  const auto at = reinterpret_cast<uintptr_t>(v.data());
  EXPECT_TRUE(at >= info.segment_base && at < info.segment_base + info.segment_size)
      << "the result should be read where it lies in the node store";

  // The same for an actor method's result (an actor without checkpoints).
  auto h = weft::actor<Holder>().remote();
  h.ready().get(60s);
  const uint64_t before_call = big_allocs();
  weft::View<uint64_t> w = weft::get_view(h.task(&Holder::words).remote(words, uint64_t(8)), 60s);
  EXPECT_EQ(big_allocs() - before_call, 1u);
  ASSERT_EQ(w.size(), words);
  EXPECT_EQ(w[words - 1], (words - 1) * 0x9e3779b97f4a7c15ull + 8);
}

TEST(LargeResults, EveryDirectlyEncodedKindReadsBackWhole) {
  const uint64_t words = (size_t(3) << 20) / sizeof(uint64_t);  // above inline_threshold
  EXPECT_EQ(weft::task(big_words).remote(words, uint64_t(3)).get(60s), big_words(words, 3));
  EXPECT_EQ(weft::task(big_text).remote(uint64_t(300) << 10, 'q').get(60s),
            std::string(size_t(300) << 10, 'q'));
  // Between the 4 KiB floor and inline_threshold: the usual inline path.
  EXPECT_EQ(weft::task(big_words).remote(uint64_t(1000), uint64_t(5)).get(60s), big_words(1000, 5));
  EXPECT_EQ(weft::task(block).remote(77u).get(60s).a, block(77).a);
  auto h = weft::actor<Holder>().remote();
  EXPECT_EQ(h.task(&Holder::words).remote(words, uint64_t(9)).get(60s), big_words(words, 9));
}
