// BodyDurations (core/body_durations.hpp): a function's estimate is unknown until it ran, rises
// at once with a long run, falls by an eighth per shorter run, and functions do not share one.
#include "core/body_durations.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace weft::core {
namespace {

TEST(BodyDurations, AFunctionNeverRunIsUnknown) {
  BodyDurations d;
  EXPECT_EQ(d.estimate_ns(42), BodyDurations::kUnknown);
  d.record(42, 1000);
  EXPECT_EQ(d.estimate_ns(43), BodyDurations::kUnknown);
}

TEST(BodyDurations, ALongRunRaisesItAtOnceAndShortRunsLowerItByAnEighth) {
  BodyDurations d;
  d.record(7, 1000);
  EXPECT_EQ(d.estimate_ns(7), 1000u);
  d.record(7, 800'000);  // one long run
  EXPECT_EQ(d.estimate_ns(7), 800'000u);
  d.record(7, 1000);
  EXPECT_EQ(d.estimate_ns(7), 700'000u);
  // Short again for a while: it takes a few dozen runs to count as short (under 50 µs).
  int runs = 1;
  while (d.estimate_ns(7) >= 50'000) {
    d.record(7, 1000);
    ++runs;
  }
  EXPECT_GT(runs, 15);
  EXPECT_LT(runs, 30);
}

TEST(BodyDurations, IdZeroAndManyFunctionsKeepTheirOwnEstimates) {
  BodyDurations d(64);
  d.record(0, 5);
  for (uint64_t id = 1; id <= 40; ++id) d.record(id * 0x9E3779B97F4A7C15ull, id * 100);
  EXPECT_EQ(d.estimate_ns(0), 5u);
  for (uint64_t id = 1; id <= 40; ++id)
    EXPECT_EQ(d.estimate_ns(id * 0x9E3779B97F4A7C15ull), id * 100);
}

TEST(BodyDurations, PastItsRoomAFunctionStaysUnknown) {
  BodyDurations d(16);  // 16 slots, all taken below
  for (uint64_t id = 1; id <= 16; ++id) d.record(id, 10);
  d.record(1000, 10);
  EXPECT_EQ(d.estimate_ns(1000), BodyDurations::kUnknown);  // treated as long: the safe side
  EXPECT_EQ(d.estimate_ns(16), 10u);
}

TEST(BodyDurations, ThreadsRecordingAtOnceLeaveAnEstimateOfTheirRuns) {
  BodyDurations d;
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&d, t] {
      for (int i = 0; i < 20000; ++i) d.record(static_cast<uint64_t>(i % 8) + 1, 100 + t);
    });
  for (auto& t : ts) t.join();
  for (uint64_t id = 1; id <= 8; ++id) {
    EXPECT_GE(d.estimate_ns(id), 100u);
    EXPECT_LE(d.estimate_ns(id), 103u);
  }
}

}  // namespace
}  // namespace weft::core
