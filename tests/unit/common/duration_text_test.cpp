// Durations in messages read as people write them.
#include "common/duration_text.hpp"

#include <gtest/gtest.h>

namespace weft {
namespace {

using namespace std::chrono;

TEST(DurationText, EachDurationInItsNaturalUnitWithoutTrailingZeros) {
  EXPECT_EQ(duration_text(milliseconds(100)), "100 ms");
  EXPECT_EQ(duration_text(milliseconds(1500)), "1.5 s");
  EXPECT_EQ(duration_text(seconds(10)), "10 s");
  EXPECT_EQ(duration_text(microseconds(250)), "250 µs");
  EXPECT_EQ(duration_text(nanoseconds(800)), "800 ns");
  EXPECT_EQ(duration_text(microseconds(123456)), "123.5 ms");
  EXPECT_EQ(duration_text(seconds(150)), "2.5 min");
  EXPECT_EQ(duration_text(nanoseconds(0)), "0 ns");
}

}  // namespace
}  // namespace weft
