// StateGather and merge_parts without MPI: which ranks are waited for, what a late, foreign or
// failed rank's reply does, and how the parts merge (a task sent to a rank that answered is in
// its gate's queue or running there; a silent rank is named).
#include "core/state_gather.hpp"

#include <gtest/gtest.h>

using nlohmann::json;
using weft::core::merge_parts;
using weft::core::StateGather;

namespace {

using namespace std::chrono_literals;
const auto t0 = StateGather::Clock::time_point{} + 1h;

json rank0_part() {
  return {{"rank", 0},
          {"job", {{"ranks", 3}}},
          {"ranks", json::array({{{"rank", 0}, {"state", "alive"}},
                                 {{"rank", 1}, {"state", "alive"}},
                                 {{"rank", 2}, {"state", "alive"}}})},
          {"nodes", json::array()},
          {"placement_groups", json::array()},
          {"used", {{"CPU", 1.0}}},
          {"queued", 0},
          {"tasks", {{"submitted", 3}, {"finished", 1}}},
          {"pending",
           json::array({
               // queued at rank 1 (its gate lists it), running at rank 1, sent to silent rank 2
               {{"kind", "task"}, {"what", "f"}, {"object", "obj(0:1)"}, {"target", 1},
                {"reason", "sent"}, {"where", "rank 1"}, {"text", "sent to rank 1"}},
               {{"kind", "task"}, {"what", "g"}, {"object", "obj(0:2)"}, {"target", 1},
                {"reason", "sent"}, {"where", "rank 1"}, {"text", "sent to rank 1"}},
               {{"kind", "task"}, {"what", "h"}, {"object", "obj(0:3)"}, {"target", 2},
                {"reason", "sent"}, {"where", "rank 2"}, {"text", "sent to rank 2"}},
           })},
          {"infeasible", json::array()},
          {"actors", json::array()},
          {"objects", json::array({{{"id", "obj(1:7)"}, {"owner", 1}, {"status", "pending"}}})},
          {"metrics", {{"messages_sent", 5}}}};
}

json rank1_part() {
  return {{"rank", 1},
          {"used", {{"CPU", 1.0}}},
          {"queued", 1},
          {"tasks", {{"submitted", 2}, {"finished", 2}}},
          {"pending", json::array({{{"kind", "task"},
                                    {"what", "f"},
                                    {"object", "obj(0:1)"},
                                    {"gate_rank", 1},
                                    {"reason", "resource"},
                                    {"where", "gate of rank 1"},
                                    {"text", "waiting for resource CPU"}}})},
          {"infeasible", json::array({{{"what", "task x"}, {"reason", "needs nosuch"}}})},
          {"actors", json::array({{{"id", "actor(1:1)"}, {"rank", 1}}})},
          {"objects", json::array({{{"id", "obj(1:7)"}, {"owner", 1}, {"status", "ready"},
                                    {"size", 8}}})},
          {"metrics", {{"messages_sent", 9}}}};
}

TEST(StateGather, WaitsForEveryRankAskedAndMergesOnTheLastReply) {
  StateGather g(1000ms);
  std::optional<json> got;
  const uint64_t id = g.begin(rank0_part(), {1, 2}, [&](json m) { got = std::move(m); }, t0);
  ASSERT_NE(id, 0u);
  g.on_reply(id, 1, rank1_part());
  EXPECT_FALSE(got);
  EXPECT_TRUE(g.active());
  g.on_reply(id, 2, json{{"rank", 2}, {"tasks", {{"submitted", 0}}}});
  ASSERT_TRUE(got);
  EXPECT_FALSE(g.active());
  EXPECT_EQ((*got)["gathered"]["answered"], json::array({0, 1, 2}));
  EXPECT_TRUE((*got)["gathered"]["missing"].empty());
}

TEST(StateGather, AJobOfOneRankCompletesAtOnce) {
  StateGather g(1000ms);
  bool done = false;
  EXPECT_EQ(g.begin(json{{"rank", 0}}, {}, [&](json) { done = true; }, t0), 0u);
  EXPECT_TRUE(done);
  EXPECT_FALSE(g.active());
}

TEST(StateGather, TheDeadlineNamesTheRanksThatDidNotAnswer) {
  StateGather g(1000ms);
  std::optional<json> got;
  const uint64_t id = g.begin(rank0_part(), {1, 2}, [&](json m) { got = std::move(m); }, t0);
  g.on_reply(id, 1, rank1_part());
  g.expire(t0 + 999ms);
  EXPECT_FALSE(got);
  g.expire(t0 + 1000ms);
  ASSERT_TRUE(got);
  const json& missing = (*got)["gathered"]["missing"];
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]["rank"], 2);
  EXPECT_EQ(missing[0]["why"], "no answer within 1000 ms");
  // The late reply of rank 2 is dropped: the gather is over.
  g.on_reply(id, 2, json{{"rank", 2}});
  EXPECT_FALSE(g.active());
}

TEST(StateGather, AFailedRankIsNotWaitedFor) {
  StateGather g(1000ms);
  std::optional<json> got;
  const uint64_t id = g.begin(rank0_part(), {1, 2}, [&](json m) { got = std::move(m); }, t0);
  g.on_reply(id, 1, rank1_part());
  g.on_rank_failed(2, "rank 2 failed");
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)["gathered"]["missing"][0]["why"], "rank 2 failed");
  EXPECT_EQ((*got)["ranks"][2]["answered"], false);
  EXPECT_EQ((*got)["ranks"][2]["missing"], "rank 2 failed");
}

TEST(StateGather, RepliesFromRanksNotAskedOrToOtherQueriesAreDropped) {
  StateGather g(1000ms);
  std::optional<json> got;
  const uint64_t id = g.begin(rank0_part(), {1}, [&](json m) { got = std::move(m); }, t0);
  g.on_reply(id + 1, 1, rank1_part());  // no such query
  g.on_reply(id, 2, rank1_part());      // rank 2 was not asked
  EXPECT_FALSE(got);
  g.on_reply(id, 1, rank1_part());
  EXPECT_TRUE(got);
}

TEST(MergeParts, ASentTaskIsQueuedAtItsTargetRunningThereOrWaitingForASilentRank) {
  const json m = merge_parts(rank0_part(), {{0, rank0_part()}, {1, rank1_part()}},
                             {{2, "no answer within 1000 ms"}});
  // obj(0:1) is in rank 1's gate queue: listed once, with rank 1's reason.
  size_t f = 0;
  for (const auto& p : m["pending"])
    if (p["object"] == "obj(0:1)") {
      ++f;
      EXPECT_EQ(p["reason"], "resource");
    }
  EXPECT_EQ(f, 1u);
  // obj(0:2) went to rank 1, which does not queue it: it runs there.
  ASSERT_EQ(m["running"].size(), 1u);
  EXPECT_EQ(m["running"][0]["object"], "obj(0:2)");
  EXPECT_EQ(m["running"][0]["text"], "running on rank 1 (submitted by rank 0)");
  EXPECT_EQ(m["ranks"][1]["running"], 1);
  EXPECT_EQ(m["ranks"][1]["queued"], 1);
  // obj(0:3) went to rank 2, which did not answer.
  bool h = false;
  for (const auto& p : m["pending"])
    if (p["object"] == "obj(0:3)") {
      h = true;
      EXPECT_EQ(p["text"], "sent to rank 2, which did not answer (no answer within 1000 ms)");
    }
  EXPECT_TRUE(h);
}

TEST(MergeParts, CountersSumAndEveryRanksItemsAreKept) {
  const json m = merge_parts(rank0_part(), {{0, rank0_part()}, {1, rank1_part()}}, {});
  EXPECT_EQ(m["tasks"]["submitted"], 5);
  EXPECT_EQ(m["tasks"]["finished"], 3);
  ASSERT_EQ(m["tasks"]["by_rank"].size(), 2u);
  EXPECT_EQ(m["tasks"]["by_rank"][1]["rank"], 1);
  ASSERT_EQ(m["infeasible"].size(), 1u);
  EXPECT_EQ(m["infeasible"][0]["rank"], 1);
  ASSERT_EQ(m["actors"].size(), 1u);
  EXPECT_EQ(m["metrics"]["messages_sent"], 5);  // rank 0's, as before
  ASSERT_EQ(m["metrics"]["per_rank"].size(), 2u);
  EXPECT_EQ(m["metrics"]["per_rank"][1]["messages_sent"], 9);
  EXPECT_EQ(m["ranks"][1]["submitted"], 2);
}

TEST(MergeParts, AnObjectIsOneRowWithItsOwnersRecordAndEveryRankThatKnowsIt) {
  const json m = merge_parts(rank0_part(), {{0, rank0_part()}, {1, rank1_part()}}, {});
  ASSERT_EQ(m["objects"].size(), 1u);
  const json& o = m["objects"][0];
  EXPECT_EQ(o["status"], "ready");  // the owner's (rank 1), not rank 0's borrowed view
  EXPECT_EQ(o["size"], 8);
  EXPECT_EQ(o["known_by"], json::array({0, 1}));
}

TEST(MergeParts, TimelinesKeepTheirRankAndClockOffset) {
  json p0 = rank0_part(), p1 = rank1_part();
  p0["timeline"] = {{"tracks", json::array()}, {"offset_ns", 0}};
  p1["timeline"] = {{"tracks", json::array()}, {"offset_ns", -42}};
  const json m = merge_parts(p0, {{0, p0}, {1, p1}}, {});
  ASSERT_EQ(m["timeline"].size(), 2u);
  EXPECT_EQ(m["timeline"][1]["rank"], 1);
  EXPECT_EQ(m["timeline"][1]["offset_ns"], -42);
}

}  // namespace
