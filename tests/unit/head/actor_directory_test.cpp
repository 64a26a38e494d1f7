// The head's named-actor directory (src/head/actor_directory.hpp) without MPI: names are unique,
// an entry follows its actor's restarts, and a failed rank frees the names of actors that will
// not come back while restartable ones stay for their creator to update.
#include "head/actor_directory.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace weft::head {
namespace {

detail::ActorRef actor(int creator, uint64_t seq, int rank, int max_restarts = 0) {
  detail::ActorRef a;
  a.id = ActorId{creator, 0, seq};
  a.rank = rank;
  a.max_restarts = max_restarts;
  return a;
}

TEST(ActorDirectory, ANameIsTakenOnceAndReleasedOnlyByItsActor) {
  ActorDirectory d;
  EXPECT_TRUE(d.add("ctr", actor(0, 1, 2)));
  EXPECT_FALSE(d.add("ctr", actor(0, 2, 3)));
  EXPECT_EQ(d.find("ctr")->id, (ActorId{0, 0, 1}));
  d.remove("ctr", ActorId{0, 0, 2});  // another actor's release: ignored
  ASSERT_TRUE(d.find("ctr"));
  d.remove("ctr", ActorId{0, 0, 1});
  EXPECT_FALSE(d.find("ctr"));
  EXPECT_TRUE(d.add("ctr", actor(0, 2, 3)));
}

TEST(ActorDirectory, AnEntryFollowsItsActorsRestartOnly) {
  ActorDirectory d;
  ASSERT_TRUE(d.add("log", actor(0, 1, 1, /*max_restarts=*/-1)));
  EXPECT_TRUE(d.update("log", actor(0, 1, 3, -1)));
  EXPECT_EQ(d.find("log")->rank, 3);
  EXPECT_FALSE(d.update("log", actor(0, 9, 2, -1))) << "another actor cannot move the name";
  EXPECT_EQ(d.find("log")->rank, 3);
  EXPECT_FALSE(d.update("nobody", actor(0, 1, 2, -1)));
  EXPECT_FALSE(d.find("nobody"));
}

TEST(ActorDirectory, AFailedRankFreesTheNamesOfActorsThatWillNotComeBack) {
  ActorDirectory d;
  ASSERT_TRUE(d.add("solo", actor(0, 1, 1, /*max_restarts=*/0)));     // gone with rank 1
  ASSERT_TRUE(d.add("phoenix", actor(0, 2, 1, /*max_restarts=*/2)));  // its creator restarts it
  ASSERT_TRUE(d.add("orphan", actor(1, 3, 1, /*max_restarts=*/2)));   // its creator died too
  ASSERT_TRUE(d.add("elsewhere", actor(0, 4, 2, 0)));
  auto gone = d.drop_host(1);
  std::sort(gone.begin(), gone.end());
  EXPECT_EQ(gone, (std::vector<std::string>{"orphan", "solo"}));
  EXPECT_FALSE(d.find("solo"));
  EXPECT_TRUE(d.find("phoenix"));
  EXPECT_TRUE(d.find("elsewhere"));
  EXPECT_TRUE(d.add("solo", actor(0, 5, 2)));  // the name is free again
  EXPECT_EQ(d.size(), 3u);
}

}  // namespace
}  // namespace weft::head
