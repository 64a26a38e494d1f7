// The owner's borrow table counts credits per borrower rank: a release only takes what that rank
// holds, and a failed rank's credits go from every entry, unpinning what only it borrowed.
#include <gtest/gtest.h>

#include <memory>

#include "core/borrow_table.hpp"

namespace weft::core {
namespace {

StatePtr state(uint64_t seq) { return std::make_shared<detail::ObjectState>(ObjectId{0, 0, seq}); }

TEST(BorrowTable, APinLastsUntilEveryBorrowersCreditsAreBack) {
  BorrowTable t;
  StatePtr s = state(1);
  std::weak_ptr<detail::ObjectState> w = s;
  t.add(s, 1);
  t.add(s, 2, 2);
  s.reset();
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.total(), 3u);
  t.release(ObjectId{0, 0, 1}, 1, 5);  // rank 1 holds one credit: only that one goes
  EXPECT_EQ(t.total(), 2u);
  t.release(ObjectId{0, 0, 1}, 3, 1);  // rank 3 holds none: nothing changes
  EXPECT_EQ(t.total(), 2u);
  EXPECT_FALSE(w.expired());
  t.release(ObjectId{0, 0, 1}, 2, 2);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.total(), 0u);
  EXPECT_TRUE(w.expired()) << "the pin outlived the last credit";
}

TEST(BorrowTable, PerBorrowerCreditsCostThreeWordsAnEntry) {
  // Two (rank, count) pairs inline and one pointer for a wider fan-out.
  EXPECT_LE(sizeof(BorrowerCredits), 3 * sizeof(void*));
}

TEST(BorrowTable, AFailedBorrowersCreditsGoFromEveryEntry) {
  BorrowTable t;
  std::weak_ptr<detail::ObjectState> only_dead, shared, other;
  {
    StatePtr a = state(1), b = state(2), c = state(3);
    only_dead = a, shared = b, other = c;
    t.add(a, 7, 3);
    // Five borrowers: two inline pairs, three more out of line, the failed one among them.
    for (int r : {1, 2, 3, 7, 4}) t.add(b, r);
    t.add(c, 1);
  }
  EXPECT_EQ(t.drop_borrower(7), 4u);
  EXPECT_TRUE(only_dead.expired()) << "what only the failed rank borrowed stays pinned";
  EXPECT_FALSE(shared.expired());
  EXPECT_FALSE(other.expired());
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.total(), 5u);
  EXPECT_EQ(t.drop_borrower(7), 0u);  // reported twice: nothing more to drop
  for (int r : {1, 2, 3, 4}) t.release(ObjectId{0, 0, 2}, r, 1);
  EXPECT_TRUE(shared.expired());
  t.release(ObjectId{0, 0, 3}, 1, 1);
  EXPECT_TRUE(other.expired());
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.total(), 0u);
}

}  // namespace
}  // namespace weft::core
