#include "core/object_table.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace weft::core {

TEST(ObjectTable, EntriesLiveExactlyAsLongAsTheirStates) {
  ObjectTable t;
  ObjectId id{0, 0, 7};
  {
    auto s = std::make_shared<ObjectState>(id);
    t.insert(s);
    EXPECT_EQ(t.find(id), s);
  }
  EXPECT_EQ(t.find(id), nullptr);  // the weak entry expired with the last ref
  t.erase_expired(id);
  EXPECT_EQ(t.size(), 0u);
}

TEST(ObjectTable, FindOrCreateSharesOneStatePerId) {
  ObjectTable t;
  bool created = false;
  auto a = t.find_or_create(ObjectId{1, 0, 1}, &created);
  EXPECT_TRUE(created);
  auto b = t.find_or_create(ObjectId{1, 0, 1}, &created);
  EXPECT_FALSE(created);
  EXPECT_EQ(a, b);
}

TEST(Completions, ParkWakesOnNotifyAndTimesOut) {
  Completions c;
  auto t0 = std::chrono::steady_clock::now();
  c.park(c.seq(), t0 + std::chrono::milliseconds(20));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(15));
  ObjectState s(ObjectId{0, 0, 1});
  std::thread th([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    complete_ok(s, std::make_shared<detail::InlinePayload>(std::vector<char>{1, 2}), c);
  });
  while (!s.done()) c.park(c.seq(), std::chrono::steady_clock::now() + std::chrono::seconds(5));
  th.join();
  EXPECT_EQ(s.payload->size(), 2u);
}

}  // namespace weft::core
