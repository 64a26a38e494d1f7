// Boxed<T>: absent until written, reads see a default T, a copy is deep, a move takes the box.
#include "common/boxed.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace weft {
namespace {

struct Parts {
  std::string name;
  std::vector<int> gpus;
  int n = 7;
};

TEST(Boxed, ReadsSeeADefaultValueAndAllocateNothing) {
  Boxed<Parts> b;
  EXPECT_FALSE(b.has_value());
  EXPECT_TRUE(b->name.empty());
  EXPECT_EQ(b->n, 7);
  EXPECT_FALSE(b.has_value()) << "a read made the value";
}

TEST(Boxed, TheFirstWriteMakesTheValue) {
  Boxed<Parts> b;
  b.mut().name = "a name longer than a short string holds inline";
  EXPECT_TRUE(b.has_value());
  EXPECT_EQ(b->name, "a name longer than a short string holds inline");
  b.mut().n = 3;
  EXPECT_EQ((*b).n, 3);
}

TEST(Boxed, ACopyIsItsOwnValue) {
  Boxed<Parts> a;
  a.mut().gpus = {0, 1};
  Boxed<Parts> c = a;
  c.mut().gpus.push_back(2);
  EXPECT_EQ(a->gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(c->gpus, (std::vector<int>{0, 1, 2}));
  Boxed<Parts> empty;
  c = empty;  // assigning an empty box empties it
  EXPECT_FALSE(c.has_value());
  const Boxed<Parts>& same = a;
  a = same;  // self-assignment keeps what is there
  EXPECT_EQ(a->gpus.size(), 2u);
}

TEST(Boxed, AMoveTakesTheValueAndLeavesAnEmptyBox) {
  Boxed<Parts> a;
  a.mut().n = 11;
  Boxed<Parts> b = std::move(a);
  EXPECT_EQ(b->n, 11);
  EXPECT_FALSE(a.has_value());  // NOLINT(bugprone-use-after-move): moved-from is empty, by design
  EXPECT_EQ(a->n, 7);
}

}  // namespace
}  // namespace weft
