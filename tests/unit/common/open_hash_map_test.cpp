// OpenHashMap (open_hash_map.hpp) against std::unordered_map: random inserts, erases and lookups,
// with a good hash and with one that sends every key to one of three homes (long probe runs that
// wrap around the array's end, where backward-shift erase has its cases).
#include "common/open_hash_map.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>

namespace weft {
namespace {

struct ThreeHomes {
  size_t operator()(uint64_t k) const { return std::hash<uint64_t>{}(k % 3) + 0x1234; }
};

template <class Hash>
void agrees_with_unordered_map(uint32_t seed, int ops, uint64_t keys) {
  OpenHashMap<uint64_t, std::string, Hash> m;
  std::unordered_map<uint64_t, std::string> ref;
  std::mt19937 rng(seed);
  for (int op = 0; op < ops; ++op) {
    const uint64_t k = 1 + rng() % keys;  // 0, the value-initialised key, marks empty slots
    switch (rng() % 4) {
      case 0:
      case 1: {
        bool inserted = false;
        std::string& v = m.try_emplace(k, &inserted);
        ASSERT_EQ(inserted, ref.count(k) == 0) << "key " << k << " at op " << op;
        v = "value " + std::to_string(op);
        ref[k] = v;
        break;
      }
      case 2:
        ASSERT_EQ(m.erase(k), ref.erase(k) == 1) << "key " << k << " at op " << op;
        break;
      default: {
        const std::string* v = m.find(k);
        auto it = ref.find(k);
        ASSERT_EQ(v != nullptr, it != ref.end()) << "key " << k << " at op " << op;
        if (v) ASSERT_EQ(*v, it->second) << "key " << k << " at op " << op;
      }
    }
    ASSERT_EQ(m.size(), ref.size());
    ASSERT_LE(m.size() * 2, m.capacity());
  }
  // Every entry is found, and for_each visits each once.
  std::map<uint64_t, std::string> seen;
  m.for_each([&](const uint64_t& k, std::string& v) { EXPECT_TRUE(seen.emplace(k, v).second); });
  EXPECT_EQ(seen.size(), ref.size());
  for (const auto& [k, v] : ref) {
    EXPECT_EQ(seen[k], v);
    ASSERT_NE(m.find(k), nullptr);
  }
}

TEST(OpenHashMap, AgreesWithUnorderedMapUnderRandomChurn) {
  for (uint32_t seed = 1; seed <= 4; ++seed)
    agrees_with_unordered_map<std::hash<uint64_t>>(seed, 20000, 600);
}

TEST(OpenHashMap, AgreesWithUnorderedMapWhenKeysShareThreeHomes) {
  for (uint32_t seed = 1; seed <= 4; ++seed) agrees_with_unordered_map<ThreeHomes>(seed, 6000, 40);
}

TEST(OpenHashMap, EraseIfKeepsAnEntryItsPredicateRefuses) {
  OpenHashMap<int, std::shared_ptr<int>> m;
  m.try_emplace(7) = std::make_shared<int>(70);
  EXPECT_FALSE(m.erase_if(7, [](const std::shared_ptr<int>& v) { return *v != 70; }));
  EXPECT_FALSE(m.erase_if(8, [](const std::shared_ptr<int>&) { return true; }));
  ASSERT_NE(m.find(7), nullptr);
  std::weak_ptr<int> w = *m.find(7);
  EXPECT_TRUE(m.erase_if(7, [](const std::shared_ptr<int>& v) { return *v == 70; }));
  EXPECT_EQ(m.find(7), nullptr);
  EXPECT_TRUE(w.expired());  // an erased slot lets go of its value
  EXPECT_TRUE(m.empty());
}

TEST(OpenHashMap, RefusesTheKeyThatMarksEmptySlots) {
  OpenHashMap<int, int> m;
  EXPECT_DEATH(m.try_emplace(0), "the value-initialised key marks empty slots");
  m.try_emplace(-1) = 1;  // any other key is an entry
  EXPECT_EQ(*m.find(-1), 1);
  EXPECT_EQ(m.find(0), nullptr);
}

}  // namespace
}  // namespace weft
