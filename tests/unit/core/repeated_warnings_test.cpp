// Ten identical warnings are one line now and one summary line with the count later.
#include "core/repeated_warnings.hpp"

#include <gtest/gtest.h>

namespace weft::core {
namespace {

using namespace std::chrono_literals;

TEST(RepeatedWarnings, TheFirstOfEachTextIsLoggedAndTheRestCountedIntoOneSummary) {
  RepeatedWarnings w(1s);
  const auto t0 = RepeatedWarnings::Clock::now();
  EXPECT_TRUE(w.note("infeasible task f: needs GPU"));
  for (int i = 0; i < 9; ++i) EXPECT_FALSE(w.note("infeasible task f: needs GPU"));
  EXPECT_TRUE(w.note("infeasible task g: needs tpu"));  // another shape: its own first line
  ASSERT_TRUE(w.has_repeats());
  auto s = w.summary(t0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].first, "infeasible task f: needs GPU");
  EXPECT_EQ(s[0].second, 9u);
  EXPECT_FALSE(w.has_repeats());
  EXPECT_FALSE(w.note("infeasible task f: needs GPU"));  // still known: counted, not logged
  EXPECT_TRUE(w.summary(t0 + 500ms).empty()) << "summaries come at most once per second";
  auto later = w.summary(t0 + 1500ms);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].second, 1u);
  EXPECT_TRUE(w.summary(t0 + 5s, /*final=*/true).empty()) << "nothing new to sum up";
}

TEST(RepeatedWarnings, TheFinalSummaryDoesNotWait) {
  RepeatedWarnings w(1h);
  const auto t0 = RepeatedWarnings::Clock::now();
  w.note("x");
  w.note("x");
  w.summary(t0);  // the first summary is due at once
  w.note("x");
  EXPECT_TRUE(w.summary(t0 + 1s).empty());
  auto s = w.summary(t0 + 1s, /*final=*/true);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].second, 1u);
}

}  // namespace
}  // namespace weft::core
