// The timeline's rings (common/timeline.hpp): spans per thread in order, a full ring keeps its
// newest spans and counts the rest, off records nothing, a finished thread's ring is reused, and
// the bytes the rings have touched are counted.
#include "common/timeline.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace tl = weft::timeline;

namespace {

const tl::Track* track_named(const std::vector<tl::Track>& all, const std::string& name) {
  for (const auto& t : all)
    if (t.name == name) return &t;
  return nullptr;
}

TEST(Timeline, SpansOfAThreadComeBackInOrderWithTheirLabels) {
  tl::configure(true, 64);
  tl::clear();
  std::thread([] {
    tl::name_thread("worker a");
    tl::record(tl::Kind::kTask, 100, 250, 7, 0, "probe");
    { tl::Span s(tl::Kind::kPut, 0, 4096); }
    tl::record(tl::Kind::kTask, 300, 310, 8, 0, std::string(100, 'x'));  // cut to fit
  }).join();
  const auto all = tl::collect();
  const tl::Track* t = track_named(all, "worker a");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->events.size(), 3u);
  EXPECT_EQ(t->events[0].kind, tl::Kind::kTask);
  EXPECT_EQ(t->events[0].start_ns, 100u);
  EXPECT_EQ(t->events[0].dur_ns, 150u);
  EXPECT_EQ(t->events[0].id, 7u);
  EXPECT_STREQ(t->events[0].label, "probe");
  EXPECT_EQ(t->events[1].kind, tl::Kind::kPut);
  EXPECT_EQ(t->events[1].arg, 4096u);
  EXPECT_EQ(std::string(t->events[2].label), std::string(sizeof t->events[2].label - 1, 'x'));
  EXPECT_EQ(t->dropped, 0u);
}

TEST(Timeline, AFullRingKeepsItsNewestSpansAndCountsTheOverwritten) {
  tl::configure(true, 16);
  tl::clear();
  std::thread([] {
    tl::name_thread("worker b");
    for (uint64_t i = 0; i < 100; ++i) tl::record(tl::Kind::kTask, i, i + 1, i);
  }).join();
  const auto all = tl::collect();
  const tl::Track* t = track_named(all, "worker b");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->events.size(), 16u);
  EXPECT_EQ(t->events.front().id, 84u);
  EXPECT_EQ(t->events.back().id, 99u);
  EXPECT_EQ(t->dropped, 84u);
}

TEST(Timeline, SwitchedOffItRecordsNothing) {
  tl::configure(false, 64);
  tl::clear();
  std::thread([] {
    tl::name_thread("worker c");
    tl::record(tl::Kind::kTask, 1, 2);
    { tl::Span s(tl::Kind::kGet); }
  }).join();
  EXPECT_EQ(track_named(tl::collect(), "worker c"), nullptr);
  tl::configure(true, 64);
}

TEST(Timeline, AThreadThatEndedLeavesItsRingToTheNextOne) {
  tl::configure(true, 64);
  tl::clear();
  std::thread([] {
    tl::name_thread("first");
    tl::record(tl::Kind::kTask, 1, 2);
  }).join();
  const size_t rings = tl::collect().size();
  std::thread([] {
    tl::name_thread("second");
    tl::record(tl::Kind::kTask, 3, 4);
  }).join();
  const auto all = tl::collect();
  EXPECT_LE(all.size(), rings);  // no new ring: the first thread's was taken over
  const tl::Track* t = track_named(all, "second");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->events.back().start_ns, 3u);
}

TEST(Timeline, TouchedBytesGrowWithTheSpansUpToTheRingsSize) {
  tl::configure(true, 48);
  size_t after_ten = 0, after_many = 0;
  std::thread([&] {
    tl::name_thread("toucher");  // its ring is made here, nothing written yet
    const size_t before = tl::touched_bytes();
    for (uint64_t i = 0; i < 10; ++i) tl::record(tl::Kind::kTask, i, i + 1);
    after_ten = tl::touched_bytes() - before;
    for (uint64_t i = 0; i < 100; ++i) tl::record(tl::Kind::kTask, i, i + 1);
    after_many = tl::touched_bytes() - before;
  }).join();
  EXPECT_EQ(after_ten, 10 * sizeof(tl::Event));
  EXPECT_EQ(after_many, 48 * sizeof(tl::Event));  // a full ring touches no more
  tl::configure(true, 64);
}

}  // namespace
