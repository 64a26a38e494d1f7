// The work-stealing protocol without MPI: when a victim speaks, whom a thief asks, how much a
// request may take, and what a failure or an empty answer changes.
#include "core/steal_planner.hpp"

#include <gtest/gtest.h>

namespace weft::core {
namespace {

using std::chrono::microseconds;
using Clock = StealPlanner::Clock;

// Ranks 0,1 on node 0 and 2,3 on node 1.
StealPlanner planner(int rank) {
  return StealPlanner(rank, {0, 0, 1, 1}, microseconds(200), microseconds(50'000));
}

TEST(StealPlanner, BacklogIsReportedOnlyAfterItWaitedTheDelay) {
  StealPlanner p = planner(0);
  Clock::time_point t0{};
  EXPECT_FALSE(p.backlog_report(3, t0));
  EXPECT_FALSE(p.backlog_report(3, t0 + microseconds(199)));
  EXPECT_EQ(p.backlog_report(3, t0 + microseconds(200)), 3u);
  EXPECT_FALSE(p.backlog_report(3, t0 + microseconds(300)));  // nothing new
}

TEST(StealPlanner, AMomentaryBacklogIsNeverReported) {
  StealPlanner p = planner(0);
  Clock::time_point t0{};
  for (int i = 0; i < 100; ++i) {  // a saturated rank: one task waits briefly, again and again
    EXPECT_FALSE(p.backlog_report(1, t0 + microseconds(10 * i)));
    EXPECT_FALSE(p.backlog_report(0, t0 + microseconds(10 * i + 5)));
  }
}

TEST(StealPlanner, BacklogChangesAreReportedWhenTheyHalveOrDoubleAndWhenGone) {
  StealPlanner p = planner(0);
  Clock::time_point t0{};
  p.backlog_report(8, t0);
  EXPECT_EQ(p.backlog_report(8, t0 + microseconds(200)), 8u);
  EXPECT_FALSE(p.backlog_report(5, t0 + microseconds(300)));
  EXPECT_EQ(p.backlog_report(4, t0 + microseconds(400)), 4u);
  EXPECT_EQ(p.backlog_report(8, t0 + microseconds(500)), 8u);
  EXPECT_EQ(p.backlog_report(0, t0 + microseconds(600)), 0u);
  EXPECT_FALSE(p.backlog_report(0, t0 + microseconds(700)));
}

TEST(StealPlanner, GrantIsHalfTheBacklogRoundedUp) {
  EXPECT_EQ(StealPlanner::grant_limit(1), 1u);
  EXPECT_EQ(StealPlanner::grant_limit(2), 1u);
  EXPECT_EQ(StealPlanner::grant_limit(7), 4u);
}

TEST(StealPlanner, AThiefAsksOnlyWhenIdleForTheDelayAndSomeoneHasBacklog) {
  StealPlanner p = planner(1);
  Clock::time_point t0{};
  EXPECT_EQ(p.victim_to_ask(true, t0), -1);  // nobody has backlog
  p.on_backlog(2, 4);
  EXPECT_TRUE(p.any_backlog());
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(100)), -1);   // idle for 100 us only
  EXPECT_EQ(p.victim_to_ask(false, t0 + microseconds(150)), -1);  // busy again: idle restarts
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(200)), -1);
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(400)), 2);
}

TEST(StealPlanner, TheLargestBacklogIsAskedAndTheOwnNodeWinsATie) {
  StealPlanner p = planner(0);
  Clock::time_point t0{};
  p.on_backlog(2, 3);
  p.on_backlog(1, 3);
  p.on_backlog(3, 2);
  p.victim_to_ask(true, t0);
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(200)), 1);  // tie 1 vs 2: 1 shares node 0
  p.on_reply(1, 3);
  p.on_backlog(3, 9);
  p.victim_to_ask(true, t0 + microseconds(300));
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(600)), 3);  // the largest, on another node
}

TEST(StealPlanner, OneRequestAtATimeUntilAnsweredOrTimedOut) {
  StealPlanner p = planner(0);
  Clock::time_point t0{};
  p.on_backlog(1, 10);
  p.victim_to_ask(true, t0);
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(200)), 1);
  EXPECT_EQ(p.outstanding(), 1);
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(300)), -1);    // still waiting for rank 1
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(50'300)), 1);  // timed out: ask again
}

TEST(StealPlanner, AnEmptyAnswerForgetsThatVictimsBacklog) {
  StealPlanner p = planner(0);
  Clock::time_point t0{};
  p.on_backlog(2, 5);
  p.victim_to_ask(true, t0);
  ASSERT_EQ(p.victim_to_ask(true, t0 + microseconds(200)), 2);
  p.on_reply(2, 0);
  EXPECT_EQ(p.known_backlog(2), 0u);
  EXPECT_FALSE(p.any_backlog());
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(10'000)), -1);
}

TEST(StealPlanner, AGrantLowersTheKnownBacklogAndRestartsIdleness) {
  StealPlanner p = planner(0);
  Clock::time_point t0{};
  p.on_backlog(2, 5);
  p.victim_to_ask(true, t0);
  ASSERT_EQ(p.victim_to_ask(true, t0 + microseconds(200)), 2);
  p.on_reply(2, 3);
  EXPECT_EQ(p.known_backlog(2), 2u);
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(300)), -1);  // idle again from 300 us
  EXPECT_EQ(p.victim_to_ask(true, t0 + microseconds(500)), 2);
}

TEST(StealPlanner, AFailedVictimIsForgottenAndItsRequestDropped) {
  StealPlanner p = planner(0);
  Clock::time_point t0{};
  p.on_backlog(3, 5);
  p.victim_to_ask(true, t0);
  ASSERT_EQ(p.victim_to_ask(true, t0 + microseconds(200)), 3);
  p.on_peer_failed(3);
  EXPECT_EQ(p.outstanding(), -1);
  EXPECT_FALSE(p.any_backlog());
}

TEST(StealPlanner, ReportsAboutItselfOrUnknownRanksAreIgnored) {
  StealPlanner p = planner(0);
  p.on_backlog(0, 5);
  p.on_backlog(7, 5);
  p.on_backlog(-1, 5);
  EXPECT_FALSE(p.any_backlog());
}

}  // namespace
}  // namespace weft::core
