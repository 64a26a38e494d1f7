// Virtual-node splitting (the pure part of discover_topology) and the doorbell's wake-ups.
#include "net/topology.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "net/doorbell.hpp"

namespace weft::net {
namespace {

TEST(SplitNodes, ContiguousBlocksPerPhysicalNode) {
  EXPECT_EQ(split_nodes({0, 0, 0, 0}, 1), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(split_nodes({0, 0, 0, 0}, 2), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(split_nodes({0, 0, 0, 0}, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(split_nodes({0, 0, 0, 0, 0}, 2), (std::vector<int>{0, 0, 1, 1, 1}));
}

TEST(SplitNodes, MoreVirtualNodesThanRanksIsCapped) {
  EXPECT_EQ(split_nodes({0, 0, 0}, 8), (std::vector<int>{0, 1, 2}));
}

TEST(SplitNodes, NumberingIsGlobalAndOrderedByLowestRank) {
  // Two physical nodes labelled 5 (ranks 1, 3) and 0 (ranks 0, 2, 4), interleaved.
  EXPECT_EQ(split_nodes({0, 5, 0, 5, 0}, 1), (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(split_nodes({0, 5, 0, 5, 0}, 2), (std::vector<int>{0, 2, 1, 3, 1}));
}

TEST(Doorbell, SleeperWakesOnRingAndTimesOutOtherwise) {
  detail::Doorbell bell{};
  auto t0 = std::chrono::steady_clock::now();
  uint32_t seen = detail::announce_sleep(bell);
  detail::sleep_on(bell, seen, std::chrono::microseconds(20000));
  detail::end_sleep(bell);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(15));

  // A ring that lands between announce and sleep must not be lost: seq moved, so the futex
  // wait returns at once.
  seen = detail::announce_sleep(bell);
  detail::ring_doorbell(bell);
  t0 = std::chrono::steady_clock::now();
  detail::sleep_on(bell, seen, std::chrono::seconds(10));
  detail::end_sleep(bell);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));

  // A writer that sees no sleeper makes no system call and changes nothing.
  const uint32_t before = bell.seq.load();
  detail::ring_doorbell(bell);
  EXPECT_EQ(bell.seq.load(), before);

  // Cross-thread: the sleeper is woken long before its timeout.
  std::atomic<bool> flag{false};
  std::thread waker([&] {
    while (!bell.sleeping.load()) std::this_thread::yield();
    flag.store(true);
    detail::ring_doorbell(bell);
  });
  t0 = std::chrono::steady_clock::now();
  while (!flag.load()) {
    seen = detail::announce_sleep(bell);
    if (!flag.load()) detail::sleep_on(bell, seen, std::chrono::seconds(10));
    detail::end_sleep(bell);
  }
  waker.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

}  // namespace
}  // namespace weft::net
