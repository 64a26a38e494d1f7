// HandoffPool: a block freed on any thread serves the next allocation of its size class, on the
// thread that allocates; the shared stack is bounded; no block is ever handed out twice at once.
#include "common/handoff_pool.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "common/move_only_function.hpp"
#include "common/recycled_bytes.hpp"

namespace weft {
namespace {

// Each test uses its own size class where it counts blocks, so one test's leftovers cannot
// change another's figures (the pools are per process), and runs on a fresh thread, whose own
// list starts empty (this thread's may hold blocks from earlier tests of the binary).
template <class F>
void on_fresh_thread(F f) {
  std::thread t(f);
  t.join();
}

TEST(HandoffPool, ABlockFreedOnAnotherThreadServesTheNextAllocationHere) {
  using P = HandoffPool<256>;
  if (!P::kRecycles) GTEST_SKIP() << "AddressSanitizer build: no recycling";
  on_fresh_thread([] {
    void* p = P::allocate();
    std::thread t([p] { P::deallocate(p); });  // the way the loop frees a driver's call
    t.join();
    EXPECT_GE(P::shared_count(), 1u);
    void* q = P::allocate();  // this thread's list is empty: it takes the shared stack
    EXPECT_EQ(q, p);
    P::deallocate(q);
  });
}

TEST(HandoffPool, TheSharedStackKeepsAtMostItsBoundAndFreesTheRest) {
  using P = HandoffPool<512>;
  if (!P::kRecycles) GTEST_SKIP() << "AddressSanitizer build: no recycling";
  on_fresh_thread([] {
    std::vector<void*> blocks;
    for (size_t i = 0; i < P::kKeep + 100; ++i) blocks.push_back(P::allocate());
    std::thread t([&] {
      for (void* b : blocks) P::deallocate(b);  // the last 100 go to operator delete
    });
    t.join();
    EXPECT_EQ(P::shared_count(), P::kKeep);
    // Taken back whole by one allocation here; the leak pass checks nothing is lost at exit.
    std::vector<void*> again;
    for (size_t i = 0; i < P::kKeep; ++i) again.push_back(P::allocate());
    EXPECT_EQ(P::shared_count(), 0u);
    for (void* b : again) P::deallocate(b);
  });
}

// Kept blocks are memory the rank holds for good: every list's bound is a byte budget, and a
// burst of a thousand tasks' 512-byte blocks (PendingCall, ExecItem) still fits one list.
TEST(HandoffPool, EachListKeepsAboutItsByteBudget) {
  EXPECT_LE(HandoffPool<1024>::kKeep * 1024, kRecycledBytesPerList);
  EXPECT_LE(HandoffPool<512>::kKeep * 512, kRecycledBytesPerList);
  EXPECT_GE(HandoffPool<512>::kKeep, 1000u);
  EXPECT_GE(HandoffPool<64>::kKeep * 64, kRecycledBytesPerList / 2);
  struct Big {
    char bytes[16384];
  };
  EXPECT_EQ(RecyclingAllocator<Big>::kKeep, 64u);  // a floor of 64, for the largest nodes
  using Node480 = std::array<char, 480>;  // the loop's in-flight map node is about this size
  EXPECT_LE(RecyclingAllocator<Node480>::kKeep * 480, kRecycledBytesPerList);
  EXPECT_GE(RecyclingAllocator<Node480>::kKeep, 1000u);
}

// recycled_bytes() counts every kept block once, wherever it waits: on the shared stack, in the
// list of the thread that took it, or in a RecyclingAllocator's list; a thread's lists leave the
// count when it exits. Only this test touches these two types, so the deltas are its own.
TEST(HandoffPool, RecycledBytesCountEveryKeptBlockWhereverItWaits) {
  using P = HandoffPool<4096>;  // a size no size class and no other test uses
  struct Big {
    char bytes[2000];
  };
  using A = RecyclingAllocator<Big>;
  if (!P::kRecycles) GTEST_SKIP() << "AddressSanitizer build: no recycling";
  const size_t start = recycled_bytes();
  on_fresh_thread([&] {
    std::vector<void*> blocks;
    for (int i = 0; i < 10; ++i) blocks.push_back(P::allocate());
    std::thread t([&] {
      for (void* b : blocks) P::deallocate(b);  // onto the shared stack
    });
    t.join();
    EXPECT_EQ(recycled_bytes(), start + 10 * 4096);
    void* one = P::allocate();  // takes the stack into this thread's list, then one block
    EXPECT_EQ(P::shared_count(), 0u);
    EXPECT_EQ(recycled_bytes(), start + 9 * 4096);
    P::deallocate(one);
    EXPECT_EQ(recycled_bytes(), start + 10 * 4096);

    A alloc;
    Big* b = alloc.allocate(1);
    alloc.deallocate(b, 1);
    EXPECT_EQ(recycled_bytes(), start + 10 * 4096 + sizeof(Big));
  });
  // That thread's lists went with it (9 blocks and the Big); the shared stack keeps the one it
  // freed last, and a thread that takes it and frees it again puts it back there.
  EXPECT_EQ(recycled_bytes(), start + 4096);
  on_fresh_thread([] { P::deallocate(P::allocate()); });
  EXPECT_EQ(recycled_bytes(), start + 4096);
  EXPECT_EQ(P::shared_count(), 1u);
}

TEST(HandoffPool, SizesShareABlockOnlyWithinTheirClass) {
  if (!HandoffPool<128>::kRecycles) GTEST_SKIP() << "AddressSanitizer build: no recycling";
  on_fresh_thread([] {
    void* p = handoff_allocate(100);
    handoff_deallocate(p, 100);
    void* q = handoff_allocate(120);  // the same 128-byte class: the same block
    EXPECT_EQ(q, p);
    void* r = handoff_allocate(1000);  // the 1024-byte class: not that block
    EXPECT_NE(r, p);
    handoff_deallocate(q, 120);
    handoff_deallocate(r, 1000);
    void* big = handoff_allocate(4096);  // past the classes: operator new and delete
    handoff_deallocate(big, 4096);
  });
}

TEST(HandoffPool, ProducersAndConsumersNeverShareABlock) {
  // Two threads allocate and write their own pattern in each block, hand it to two others that
  // check the pattern and free it, over and over: a block handed out twice at once would show
  // another thread's pattern (and ThreadSanitizer a race).
  using P = HandoffPool<64>;
  constexpr int kPerProducer = 20000;
  std::atomic<void*> slots[2][64] = {};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int side = 0; side < 2; ++side) {
    threads.emplace_back([&, side] {  // producer
      for (int i = 0; i < kPerProducer; ++i) {
        auto* b = static_cast<uint64_t*>(P::allocate());
        for (int w = 0; w < 8; ++w) b[w] = (uint64_t(side) << 32) | uint64_t(i);
        std::atomic<void*>& slot = slots[side][i % 64];
        void* expected = nullptr;
        while (!slot.compare_exchange_weak(expected, b, std::memory_order_release)) {
          expected = nullptr;
          std::this_thread::yield();
        }
      }
    });
    threads.emplace_back([&, side] {  // consumer
      for (int i = 0; i < kPerProducer; ++i) {
        std::atomic<void*>& slot = slots[side][i % 64];
        void* b;
        while (!(b = slot.exchange(nullptr, std::memory_order_acquire))) std::this_thread::yield();
        const auto* w = static_cast<const uint64_t*>(b);
        for (int k = 0; k < 8; ++k)
          if (w[k] != ((uint64_t(side) << 32) | uint64_t(i))) bad.fetch_add(1);
        P::deallocate(b);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(HandoffPool, AFunctionMadeHereAndDestroyedThereReleasesItsCaptures) {
  auto alive = std::make_shared<int>(7);
  std::weak_ptr<int> watch = alive;
  MoveOnlyFunction<int()> f = [a = std::move(alive)] { return *a; };
  std::thread t([g = std::move(f)]() mutable { EXPECT_EQ(g(), 7); });
  t.join();  // g, and its capture, died on that thread
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace weft
