// IdleBackoff (core/idle_backoff.hpp): spin, yield, park by idle time; yields that ran another
// thread shorten the spin phase to nothing, quick ones bring it back, never past loop_spin_us;
// the park comes at loop_spin_us + loop_yield_us whatever the spin phase.
#include "core/idle_backoff.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace weft::core {
namespace {

using std::chrono::microseconds;
using Step = IdleBackoff::Step;

TEST(IdleBackoff, SpinsThenYieldsThenParksByIdleTime) {
  IdleBackoff b(microseconds(50), microseconds(300));
  EXPECT_EQ(b.step(microseconds(0)), Step::kSpin);
  EXPECT_EQ(b.step(microseconds(49)), Step::kSpin);
  EXPECT_EQ(b.step(microseconds(50)), Step::kYield);
  EXPECT_EQ(b.step(microseconds(349)), Step::kYield);
  EXPECT_EQ(b.step(microseconds(350)), Step::kPark);
}

TEST(IdleBackoff, NoSpinAndNoYieldParksAtOnce) {
  IdleBackoff b(microseconds(0), microseconds(0));
  EXPECT_EQ(b.step(microseconds(0)), Step::kPark);
  b.yielded(microseconds(0));  // a quick yield cannot grow a spin phase past its setting
  EXPECT_EQ(b.spin_phase(), microseconds(0));
  EXPECT_EQ(b.step(microseconds(0)), Step::kPark);
}

TEST(IdleBackoff, YieldsThatRanAnotherThreadEndTheSpinPhaseButNotTheYieldPhase) {
  IdleBackoff b(microseconds(50), microseconds(300));
  int handovers = 0;
  while (b.spin_phase() > microseconds(0)) {
    b.yielded(microseconds(60));  // the other thread on this core ran meanwhile
    ASSERT_LE(++handovers, 8) << "the spin phase should halve each time";
  }
  EXPECT_GE(handovers, 5);  // 50 → 25 → 12.5 → 6.25 → 3.1 → 1.6 → 0
  EXPECT_EQ(b.step(microseconds(0)), Step::kYield);
  EXPECT_EQ(b.step(microseconds(349)), Step::kYield);
  EXPECT_EQ(b.step(microseconds(350)), Step::kPark);
  b.yielded(IdleBackoff::kHandedOver);  // exactly the bound counts as handed over
  EXPECT_EQ(b.spin_phase(), microseconds(0));
}

TEST(IdleBackoff, QuickYieldsBringTheSpinPhaseBackUpToItsSetting) {
  IdleBackoff b(microseconds(50), microseconds(300));
  for (int i = 0; i < 10; ++i) b.yielded(microseconds(100));
  ASSERT_EQ(b.spin_phase(), microseconds(0));
  int quick = 0;
  while (b.spin_phase() < microseconds(50)) {
    b.yielded(std::chrono::nanoseconds(600));  // no other thread wanted the core
    ASSERT_LE(++quick, 8) << "the spin phase should double each time";
  }
  EXPECT_EQ(b.spin_phase(), microseconds(50));
  b.yielded(std::chrono::nanoseconds(600));
  EXPECT_EQ(b.spin_phase(), microseconds(50));
  EXPECT_EQ(b.step(microseconds(49)), Step::kSpin);
}

TEST(IdleBackoff, NewSettingsBoundWhatWasLearnt) {
  IdleBackoff b(microseconds(50), microseconds(300));
  b.yielded(microseconds(100));
  EXPECT_EQ(b.spin_phase(), microseconds(25));
  b.configure(microseconds(50), microseconds(300));  // the same settings: the lesson is kept
  EXPECT_EQ(b.spin_phase(), microseconds(25));
  b.configure(microseconds(10), microseconds(20));  // tighter: bounded by them
  EXPECT_EQ(b.spin_phase(), microseconds(10));
  EXPECT_EQ(b.step(microseconds(29)), Step::kYield);
  EXPECT_EQ(b.step(microseconds(30)), Step::kPark);
}

TEST(IdleBackoff, EachThreadHasItsOwn) {
  IdleBackoff& mine = IdleBackoff::this_thread(microseconds(50), microseconds(300));
  for (int i = 0; i < 10; ++i) mine.yielded(std::chrono::nanoseconds(600));  // whatever before
  ASSERT_EQ(mine.spin_phase(), microseconds(50));
  mine.yielded(microseconds(100));
  EXPECT_EQ(&IdleBackoff::this_thread(microseconds(50), microseconds(300)), &mine);
  EXPECT_EQ(mine.spin_phase(), microseconds(25));
  std::chrono::nanoseconds other{-1};
  std::thread([&] {
    other = IdleBackoff::this_thread(microseconds(50), microseconds(300)).spin_phase();
  }).join();
  EXPECT_EQ(other, microseconds(50));
}

}  // namespace
}  // namespace weft::core
