// Dependency resolution without MPI: calls held until their ref arguments are done, released
// in order, an argument listed twice, and ids nobody waits for.
#include "core/dependency_waiter.hpp"

#include <gtest/gtest.h>

#include <string>

namespace weft::core {
namespace {

struct Call {
  std::string name;
};

ObjectId id(uint64_t seq) { return ObjectId{0, 0, seq}; }
std::unique_ptr<Call> call(std::string n) { return std::make_unique<Call>(Call{std::move(n)}); }

std::vector<std::string> names(const std::vector<std::unique_ptr<Call>>& v) {
  std::vector<std::string> out;
  for (const auto& c : v) out.push_back(c->name);
  return out;
}

TEST(DependencyWaiter, ACallWithNothingPendingComesStraightBack) {
  DependencyWaiter<Call> w;
  auto back = w.hold(call("f"), {});
  ASSERT_TRUE(back);
  EXPECT_EQ(back->name, "f");
  EXPECT_EQ(w.held(), 0u);
}

TEST(DependencyWaiter, ACallIsReleasedWhenItsLastDependencyIsDone) {
  DependencyWaiter<Call> w;
  EXPECT_FALSE(w.hold(call("f"), {id(1), id(2)}));
  EXPECT_TRUE(w.done(id(1)).empty());
  EXPECT_EQ(w.held(), 1u);
  EXPECT_EQ(names(w.done(id(2))), (std::vector<std::string>{"f"}));
  EXPECT_EQ(w.held(), 0u);
  EXPECT_FALSE(w.waits_for(id(1)));
}

TEST(DependencyWaiter, CallsOnOneDependencyAreReleasedInTheOrderTheyWereHeld) {
  DependencyWaiter<Call> w;
  w.hold(call("a"), {id(7)});
  w.hold(call("b"), {id(7)});
  w.hold(call("c"), {id(7), id(8)});
  EXPECT_EQ(names(w.done(id(7))), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(names(w.done(id(8))), (std::vector<std::string>{"c"}));
}

TEST(DependencyWaiter, AnArgumentListedTwiceIsWaitedForOnce) {
  DependencyWaiter<Call> w;
  w.hold(call("f(a, b, a)"), {id(1), id(2), id(1)});
  EXPECT_TRUE(w.done(id(2)).empty());
  EXPECT_EQ(names(w.done(id(1))), (std::vector<std::string>{"f(a, b, a)"}));
  EXPECT_EQ(w.held(), 0u);
}

TEST(DependencyWaiter, AnIdNobodyWaitsForReleasesNothing) {
  DependencyWaiter<Call> w;
  w.hold(call("f"), {id(1)});
  EXPECT_FALSE(w.waits_for(id(9)));
  EXPECT_TRUE(w.done(id(9)).empty());
  EXPECT_TRUE(w.done(id(1)).size() == 1);
  EXPECT_TRUE(w.done(id(1)).empty());  // done twice: nothing more
}

}  // namespace
}  // namespace weft::core
