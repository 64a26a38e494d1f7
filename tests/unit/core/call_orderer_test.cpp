// Per-caller ordering of actor calls without MPI: out-of-order arrival, several callers,
// duplicates, and what a dying actor drains.
#include "core/call_orderer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace weft::core {
namespace {

std::vector<std::string> names(const std::deque<std::string>& d) { return {d.begin(), d.end()}; }

TEST(CallOrderer, CallsInOrderPassStraightThrough) {
  CallOrderer<std::string> o;
  std::deque<std::string> ready;
  EXPECT_TRUE(o.accept(1, 0, "a", ready));
  EXPECT_TRUE(o.accept(1, 1, "b", ready));
  EXPECT_EQ(names(ready), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.held(), 0u);
}

TEST(CallOrderer, AnEarlyCallWaitsForItsPredecessorsThenAllGoInOrder) {
  CallOrderer<std::string> o;
  std::deque<std::string> ready;
  o.accept(1, 2, "c", ready);
  o.accept(1, 1, "b", ready);
  EXPECT_TRUE(ready.empty());
  EXPECT_EQ(o.held(), 2u);
  o.accept(1, 0, "a", ready);
  EXPECT_EQ(names(ready), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(o.held(), 0u);
}

TEST(CallOrderer, CallersAreOrderedIndependently) {
  CallOrderer<std::string> o;
  std::deque<std::string> ready;
  o.accept(1, 1, "1b", ready);
  o.accept(2, 0, "2a", ready);  // caller 2 is not held back by caller 1's gap
  EXPECT_EQ(names(ready), (std::vector<std::string>{"2a"}));
  o.accept(1, 0, "1a", ready);
  EXPECT_EQ(names(ready), (std::vector<std::string>{"2a", "1a", "1b"}));
}

TEST(CallOrderer, APositionSeenTwiceIsDropped) {
  CallOrderer<std::string> o;
  std::deque<std::string> ready;
  o.accept(1, 0, "a", ready);
  EXPECT_FALSE(o.accept(1, 0, "a again", ready));  // already run
  o.accept(1, 2, "c", ready);
  EXPECT_FALSE(o.accept(1, 2, "c again", ready));  // already held
  EXPECT_EQ(names(ready), (std::vector<std::string>{"a"}));
  EXPECT_EQ(o.held(), 1u);
}

TEST(CallOrderer, DrainHandsOverEveryHeldCallAndForgetsThem) {
  CallOrderer<std::string> o;
  std::deque<std::string> ready;
  o.accept(1, 3, "1d", ready);
  o.accept(2, 1, "2b", ready);
  std::vector<std::string> failed;
  o.drain([&](const std::string& c) { failed.push_back(c); });
  std::sort(failed.begin(), failed.end());
  EXPECT_EQ(failed, (std::vector<std::string>{"1d", "2b"}));
  EXPECT_EQ(o.held(), 0u);
}

TEST(CallOrderer, AResumeStartsTheCallersOrderAtItsBase) {
  // A restarted actor: the caller's positions below 57 went to the previous incarnation.
  CallOrderer<std::string> o;
  std::deque<std::string> ready;
  o.accept(1, 58, "58", ready);  // arrived before the resume would wait for 0..57 for ever
  EXPECT_TRUE(ready.empty());
  o.start_at(1, 57, ready);
  EXPECT_TRUE(ready.empty());
  o.accept(1, 57, "57", ready);
  EXPECT_EQ(names(ready), (std::vector<std::string>{"57", "58"}));
  EXPECT_FALSE(o.accept(1, 3, "old", ready));  // below the base: a duplicate
}

TEST(CallOrderer, AResumeReleasesHeldCallsAndDropsThoseBelowIt) {
  CallOrderer<std::string> o;
  std::deque<std::string> ready;
  o.accept(2, 4, "4", ready);
  o.accept(2, 10, "10", ready);
  o.accept(2, 11, "11", ready);
  EXPECT_EQ(o.held(), 3u);
  o.start_at(2, 10, ready);
  EXPECT_EQ(names(ready), (std::vector<std::string>{"10", "11"}));
  EXPECT_EQ(o.held(), 0u);
  o.start_at(2, 5, ready);  // already passed: nothing changes
  EXPECT_TRUE(o.accept(2, 12, "12", ready));
  EXPECT_EQ(ready.back(), "12");
}

}  // namespace
}  // namespace weft::core
