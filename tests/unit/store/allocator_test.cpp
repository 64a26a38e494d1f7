#include "store/allocator.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace weft::store {
namespace {

struct Region {
  std::vector<std::byte> mem;
  AllocatorState st{};
  // The region starts 4096 bytes past a page-aligned base, as in the segment (offset 0 is the
  // allocator's "none").
  explicit Region(size_t bytes) : mem(bytes + 8192) { Allocator::init(base(), &st, 4096, bytes); }
  std::byte* base() {
    auto p = reinterpret_cast<uintptr_t>(mem.data());
    return mem.data() + ((4096 - p % 4096) % 4096);
  }
  Allocator a() { return Allocator(base(), &st); }
};

// Payloads start kPayloadLead (8) bytes past a cache line: a raw vector's elements, after its
// count, then start 16 bytes past one, as glibc's large blocks do (allocator.hpp says why).
TEST(StoreAllocator, PayloadsStart8BytesPastACacheLineAndAreDisjoint) {
  Region r(1 << 20);
  Allocator a = r.a();
  std::map<uint64_t, uint64_t> live;
  for (size_t sz : {1, 63, 64, 65, 1000, 4096, 12345}) {
    auto off = a.allocate(sz);
    ASSERT_TRUE(off);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.base() + *off) % 64, kPayloadLead);
    live[*off] = sz;
  }
  uint64_t end = 0;
  for (auto [off, sz] : live) {
    EXPECT_GE(off, end);
    end = off + sz;
  }
  EXPECT_TRUE(a.validate());
}

// Large payloads start kPayloadLead past a page (allocator.hpp: where glibc's large blocks start,
// for the by-value copy), the bytes skipped become free blocks, and everything coalesces back.
// A region with no room to move the start still takes the request, anywhere.
TEST(StoreAllocator, LargePayloadsArePlacedPastAPageAndFreeBackToOneBlock) {
  Region r(64 << 20);
  Allocator a = r.a();
  const uint64_t first_free = a.largest_free();
  std::vector<uint64_t> offs;
  for (size_t sz : {size_t(100), kPagePlacedBytes, size_t(200), kPagePlacedBytes + 12345,
                    size_t(5000), size_t(7) << 20}) {
    auto off = a.allocate(sz);
    ASSERT_TRUE(off) << sz;
    const auto addr = reinterpret_cast<uintptr_t>(r.base() + *off);
    EXPECT_EQ(addr % 64, kPayloadLead) << sz;
    if (sz >= kPagePlacedBytes) {
      EXPECT_EQ(addr % kPlacementPage, kPayloadLead) << sz;
    }
    offs.push_back(*off);
    ASSERT_TRUE(a.validate());
  }
  for (size_t i = 0; i < offs.size(); i += 2) a.free(offs[i]);
  ASSERT_TRUE(a.validate());
  for (size_t i = 1; i < offs.size(); i += 2) a.free(offs[i]);
  ASSERT_TRUE(a.validate());
  EXPECT_EQ(a.used(), 0u);
  EXPECT_EQ(a.largest_free(), first_free);

  Region tight(kPagePlacedBytes + 4096);  // room for the block, not for moving its start
  Allocator t = tight.a();
  auto off = t.allocate(kPagePlacedBytes);
  ASSERT_TRUE(off);
  EXPECT_TRUE(t.validate());
}

TEST(StoreAllocator, FreeCoalescesBackToOneBlock) {
  Region r(1 << 20);
  Allocator a = r.a();
  const uint64_t largest = a.largest_free();
  std::vector<uint64_t> offs;
  for (int i = 0; i < 100; ++i) offs.push_back(*a.allocate(1000 + i * 37));
  // Free in an interleaved order so both forward and backward merges happen.
  for (size_t i = 0; i < offs.size(); i += 2) a.free(offs[i]);
  for (size_t i = 1; i < offs.size(); i += 2) a.free(offs[i]);
  EXPECT_EQ(a.used(), 0u);
  EXPECT_EQ(a.largest_free(), largest);
  EXPECT_TRUE(a.validate());
}

TEST(StoreAllocator, ReportsNoRoomInsteadOfOverlapping) {
  Region r(64 * 1024);
  Allocator a = r.a();
  EXPECT_FALSE(a.allocate(64 * 1024));  // the header does not fit beside it
  auto big = a.allocate(60 * 1024);
  ASSERT_TRUE(big);
  EXPECT_FALSE(a.allocate(8 * 1024));
  a.free(*big);
  EXPECT_TRUE(a.allocate(8 * 1024));
}

TEST(StoreAllocator, RandomWorkloadKeepsInvariantsAndRebuildIsExact) {
  Region r(8 << 20);
  Allocator a = r.a();
  std::mt19937_64 rng(42);
  std::vector<uint64_t> live;
  for (int step = 0; step < 20000; ++step) {
    if (!live.empty() && (rng() % 3 == 0 || live.size() > 400)) {
      size_t i = rng() % live.size();
      a.free(live[i]);
      live[i] = live.back();
      live.pop_back();
    } else if (auto off = a.allocate(1 + rng() % 65536)) {
      live.push_back(*off);
    }
    if (step % 1000 == 0) {
      ASSERT_TRUE(a.validate()) << "step " << step;
    }
  }
  const uint64_t used = a.used();
  ASSERT_TRUE(a.rebuild());  // what repair does after a dead lock holder
  EXPECT_EQ(a.used(), used);
  EXPECT_TRUE(a.validate());
  for (uint64_t off : live) a.free(off);
  EXPECT_EQ(a.used(), 0u);
  EXPECT_TRUE(a.validate());
}

}  // namespace
}  // namespace weft::store
