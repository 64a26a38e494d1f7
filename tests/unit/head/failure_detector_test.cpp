// head::FailureDetector: heartbeats and ticks in, dead ranks out, with injected time.
#include "head/failure_detector.hpp"

#include <gtest/gtest.h>

namespace weft::head {
namespace {

using namespace std::chrono_literals;
using Clock = FailureDetector::Clock;

const Clock::time_point t0 = Clock::time_point() + 1000s;

// Ticks every `step` from `from` to `to` (inclusive), beating for `beating` ranks each tick;
// returns every rank declared meanwhile.
std::vector<DeadRank> run(FailureDetector& d, Clock::time_point from, Clock::time_point to,
                          std::chrono::milliseconds step, std::vector<int> beating) {
  std::vector<DeadRank> out;
  for (auto t = from; t <= to; t += step) {
    for (int r : beating) d.on_heartbeat(r, t);
    for (auto& x : d.tick(t)) out.push_back(x);
  }
  return out;
}

TEST(FailureDetector, BeatingRanksAreNeverDeclared) {
  FailureDetector d({1, 2, 3}, 500ms, t0);
  EXPECT_TRUE(run(d, t0, t0 + 60s, 100ms, {1, 2, 3}).empty());
  EXPECT_TRUE(d.watching(1) && d.watching(2) && d.watching(3));
}

TEST(FailureDetector, ASilentRankIsDeclaredOnceAfterTheTimeoutWithTheReason) {
  FailureDetector d({1, 2, 3}, 500ms, t0);
  run(d, t0, t0 + 1s, 100ms, {1, 2, 3});
  // Rank 2 stops at t0 + 1 s; the others keep beating.
  auto dead = run(d, t0 + 1100ms, t0 + 1500ms, 100ms, {1, 3});
  EXPECT_TRUE(dead.empty()) << "declared after only " << dead[0].silent.count() << " ms";
  dead = run(d, t0 + 1600ms, t0 + 3s, 100ms, {1, 3});
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].rank, 2);
  EXPECT_EQ(dead[0].silent, 600ms);
  EXPECT_EQ(dead[0].reason, "no heartbeat for 600 ms, failure_timeout_ms = 500");
  EXPECT_FALSE(d.watching(2));
  EXPECT_TRUE(d.watching(1) && d.watching(3));
}

TEST(FailureDetector, ARankThatNeverBeatsIsDeclaredFromTheStart) {
  FailureDetector d({1, 2}, 500ms, t0);
  auto dead = run(d, t0 + 100ms, t0 + 1s, 100ms, {1});
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].rank, 2);
}

TEST(FailureDetector, BeatsOfADeclaredRankAreIgnored) {
  FailureDetector d({1}, 500ms, t0);
  auto dead = run(d, t0 + 100ms, t0 + 1s, 100ms, {});
  ASSERT_EQ(dead.size(), 1u);
  // It speaks again (SIGCONT): fenced, never watched again, never declared twice.
  EXPECT_FALSE(d.on_heartbeat(1, t0 + 1100ms));
  EXPECT_FALSE(d.watching(1));
  EXPECT_TRUE(run(d, t0 + 1100ms, t0 + 5s, 100ms, {1}).empty());
}

TEST(FailureDetector, AForgottenRankIsNotDeclared) {
  FailureDetector d({1, 2}, 500ms, t0);
  d.forget(2);  // its process exited: reported by the transport already
  auto dead = run(d, t0 + 100ms, t0 + 2s, 100ms, {1});
  EXPECT_TRUE(dead.empty());
  EXPECT_FALSE(d.on_heartbeat(2, t0 + 2s));
  EXPECT_FALSE(d.on_heartbeat(7, t0 + 2s)) << "a rank never watched";
}

TEST(FailureDetector, TheWatchersOwnPauseIsNobodysSilence) {
  FailureDetector d({1, 2}, 500ms, t0);
  run(d, t0, t0 + 1s, 100ms, {1, 2});
  // The watcher is stopped for 3 s; the heartbeats sent meanwhile are still unread when it
  // ticks again, and arrive just after.
  EXPECT_TRUE(d.tick(t0 + 4s).empty());
  EXPECT_EQ(d.pauses(), 1u);
  EXPECT_TRUE(run(d, t0 + 4s + 100ms, t0 + 10s, 100ms, {1, 2}).empty());
  // A rank that really stopped is still found after the pause, one timeout later.
  auto dead = run(d, t0 + 10100ms, t0 + 11s, 100ms, {1});
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].rank, 2);
}

TEST(FailureDetector, ASilenceSpreadOverShortTicksIsCounted) {
  // Ticks closer than the gap limit: the watcher is running, the silence is real.
  FailureDetector d({1}, 500ms, t0, 200ms);
  auto dead = run(d, t0 + 150ms, t0 + 900ms, 150ms, {});
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_GT(dead[0].silent, 500ms);
}

TEST(FailureDetector, ClockGoingBackwardsIsIgnored) {
  FailureDetector d({1}, 500ms, t0);
  d.on_heartbeat(1, t0 + 300ms);
  EXPECT_TRUE(d.tick(t0 + 300ms).empty());
  EXPECT_TRUE(d.tick(t0 + 100ms).empty());     // an older tick changes nothing
  EXPECT_TRUE(d.on_heartbeat(1, t0 + 200ms));  // an older beat does not move `last` back
  auto dead = run(d, t0 + 400ms, t0 + 800ms, 100ms, {});
  EXPECT_TRUE(dead.empty()) << "the beat at +300 ms was taken back";
  dead = run(d, t0 + 900ms, t0 + 900ms, 100ms, {});
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].silent, 600ms);
}

TEST(FailureDetector, ARunningButSilentRankIsSparedUpToTheBusyLimit) {
  // One long turn (its process runs, its loop does not answer) is not a hang until busy_limit;
  // a stopped process is declared at the timeout.
  FailureDetector d({1, 2}, 500ms, t0);
  d.set_busy_limit(2s);
  auto running = [](int rank) { return rank == 1; };  // rank 2 is stopped
  std::vector<DeadRank> dead;
  for (auto t = t0 + 100ms; t <= t0 + 1s; t += 100ms)
    for (auto& x : d.tick(t, running)) dead.push_back(x);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].rank, 2);
  EXPECT_EQ(dead[0].reason, "no heartbeat for 600 ms, failure_timeout_ms = 500");
  dead.clear();
  for (auto t = t0 + 1100ms; t <= t0 + 2s; t += 100ms)
    for (auto& x : d.tick(t, running)) dead.push_back(x);
  EXPECT_TRUE(dead.empty()) << "rank 1 declared after " << dead[0].silent.count() << " ms";
  for (auto t = t0 + 2100ms; t <= t0 + 3s; t += 100ms)
    for (auto& x : d.tick(t, running)) dead.push_back(x);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].rank, 1);
  EXPECT_EQ(dead[0].reason,
            "no heartbeat for 2100 ms while its process runs (its event loop does not turn), "
            "failure_timeout_ms = 500");
}

TEST(FailureDetector, ASparedRankThatBeatsAgainIsWatchedAsBefore) {
  FailureDetector d({1}, 500ms, t0);
  auto running = [](int) { return true; };
  for (auto t = t0 + 100ms; t <= t0 + 1500ms; t += 100ms) EXPECT_TRUE(d.tick(t, running).empty());
  d.on_heartbeat(1, t0 + 1500ms);  // the long turn ended
  EXPECT_TRUE(d.watching(1));
  // Later it stops for real: declared one timeout after its last beat.
  std::vector<DeadRank> dead;
  for (auto t = t0 + 1600ms; t <= t0 + 2200ms; t += 100ms)
    for (auto& x : d.tick(t, [](int) { return false; })) dead.push_back(x);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].silent, 600ms);
}

TEST(FailureDetector, RejectsAZeroTimeout) {
  EXPECT_THROW(FailureDetector({1}, 0ms, t0), std::invalid_argument);
}

}  // namespace
}  // namespace weft::head
