// FunctionQueue (the event loop's commands, the worker pool's jobs) and MoveOnlyFunction: order,
// every function taken exactly once under concurrent producers and consumers, and what was never
// run destroyed with its captures.
#include "common/function_queue.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace weft {
namespace {

TEST(MoveOnlyFunction, HoldsMoveOnlyCapturesAndGivesThemBackThroughARawPointer) {
  auto box = std::make_unique<int>(41);
  MoveOnlyFunction<int(int)> f = [b = std::move(box)](int x) { return *b + x; };
  EXPECT_EQ(f(1), 42);
  void* raw = f.release();
  EXPECT_FALSE(f);
  auto back = MoveOnlyFunction<int(int)>::adopt(raw);
  EXPECT_EQ(back(2), 43);
}

TEST(FunctionQueue, OneProducerKeepsItsOrder) {
  FunctionQueue<void(std::vector<int>&)> q;
  for (int i = 0; i < 5000; ++i) q.push([i](std::vector<int>& out) { out.push_back(i); });
  std::vector<int> got;
  MoveOnlyFunction<void(std::vector<int>&)> f;
  while (q.try_pop(f)) f(got);
  ASSERT_EQ(got.size(), 5000u);
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(got[i], i);
  EXPECT_FALSE(q.try_pop(f));
}

TEST(FunctionQueue, ManyProducersAndConsumersTakeEachFunctionOnce) {
  FunctionQueue<void()> q;
  constexpr int kProducers = 4, kEach = 20000;
  std::vector<std::atomic<int>> runs(kProducers * kEach);
  std::atomic<int> producing{kProducers};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p)
    threads.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) {
        const int id = p * kEach + i;
        q.push([&runs, id] { runs[id].fetch_add(1); });
      }
      producing.fetch_sub(1);
    });
  for (int c = 0; c < 3; ++c)
    threads.emplace_back([&] {
      MoveOnlyFunction<void()> f;
      for (;;) {
        if (q.try_pop(f)) {
          f();
        } else if (producing.load() == 0) {
          if (!q.try_pop(f)) return;
          f();
        }
      }
    });
  for (auto& t : threads) t.join();
  for (int id = 0; id < kProducers * kEach; ++id)
    ASSERT_EQ(runs[id].load(), 1) << "function " << id;
}

TEST(FunctionQueue, WhatNeverRanIsDestroyedWithItsCaptures) {
  auto held = std::make_shared<int>(7);
  {
    FunctionQueue<void()> q;
    for (int i = 0; i < 100; ++i) q.push([held] {});
    EXPECT_EQ(held.use_count(), 101);
  }  // the queue goes with 100 functions in it
  EXPECT_EQ(held.use_count(), 1);
}

}  // namespace
}  // namespace weft
