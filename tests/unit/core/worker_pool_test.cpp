#include "core/worker_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>

namespace weft::core {

TEST(WorkerPool, RunsEveryJobAndDrains) {
  WorkerPool pool(2);
  std::atomic<int> n{0};
  for (int i = 0; i < 1000; ++i) pool.submit([&] { n.fetch_add(1); });
  EXPECT_TRUE(pool.drain(10000));
  EXPECT_EQ(n.load(), 1000);
}

TEST(WorkerPool, ABlockedJobCanHelpRunQueuedJobs) {
  WorkerPool pool(1);  // one thread: the inner job only runs if the outer one helps
  std::atomic<bool> inner_done{false};
  std::atomic<bool> outer_done{false};
  pool.submit([&] {
    pool.submit([&] { inner_done = true; });
    while (!inner_done) pool.help_one();
    outer_done = true;
  });
  EXPECT_TRUE(pool.drain(10000));
  EXPECT_TRUE(outer_done.load());
}

}  // namespace weft::core
