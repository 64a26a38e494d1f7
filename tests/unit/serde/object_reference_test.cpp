// Pointers that name an object loaded earlier (Boost's object tracking), on weft's archive: the
// references an encoder writes decode as before (shared_ptr aliases share one control block, a
// raw pointer aliases an object an owning pointer holds); the ones only hostile or corrupt bytes
// hold are a SerializationError, never an object of another class deleted, or one object owned
// twice (found by tests/fuzz serde_archive: a shared_ptr<Base> made to own a Particle).
#include <gtest/gtest.h>

#include <boost/serialization/shared_ptr.hpp>
#include <boost/serialization/unique_ptr.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "weft/errors.hpp"
#include "weft/serialization.hpp"

namespace weft::serde {
namespace {

struct Item {
  int v = 0;
  std::string s;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar & v & s;
  }
};

struct Other {
  double x = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar & x;
  }
};

struct TwoUnique {
  std::unique_ptr<Item> a, b;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar & a & b;
  }
};

struct UniqueThenShared {
  std::unique_ptr<Item> u;
  std::shared_ptr<Item> s;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar & u & s;
  }
};

struct SharedThenRaw {
  std::shared_ptr<Item> s;
  Item* raw = nullptr;  // an alias: never owned
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar & s & raw;
  }
};

struct ValueThenRaw {
  Item held;
  Item* raw = nullptr;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar & held & raw;
  }
};

struct TwoClasses {
  std::shared_ptr<Item> item;
  std::shared_ptr<Other> other;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar & item & other;
  }
};

template <class T>
std::string decode_error(const std::vector<char>& bytes) {
  try {
    from_bytes<T>(bytes);
  } catch (const SerializationError& e) {
    return e.what();
  }
  return "";
}

TEST(SerdeObjectReferences, EncodedAliasesDecodeAsBefore) {
  SharedThenRaw v;
  v.s = std::make_shared<Item>(Item{1, "one"});
  v.raw = v.s.get();
  const SharedThenRaw back = from_bytes<SharedThenRaw>(to_bytes(v));
  ASSERT_NE(back.s, nullptr);
  EXPECT_EQ(back.raw, back.s.get());
  EXPECT_EQ(back.raw->s, "one");

  std::vector<std::shared_ptr<Item>> two{v.s, v.s};
  const auto back2 = from_bytes<std::vector<std::shared_ptr<Item>>>(to_bytes(two));
  ASSERT_EQ(back2.size(), 2u);
  EXPECT_EQ(back2[0].get(), back2[1].get());
  EXPECT_EQ(back2[0].use_count(), 2);  // one control block
}

TEST(SerdeObjectReferences, TwoUniquePtrsNeverShareAnObject) {
  TwoUnique v;
  v.a = std::make_unique<Item>(Item{2, "two"});
  v.b.reset(v.a.get());  // only to make the bytes an encoder never writes
  const std::vector<char> bytes = to_bytes(v);
  (void)v.b.release();
  const std::string e = decode_error<TwoUnique>(bytes);
  EXPECT_NE(e.find("std::unique_ptr, which never shares"), std::string::npos) << e;
}

TEST(SerdeObjectReferences, ASharedPtrNeverTakesAnObjectAUniquePtrOwns) {
  UniqueThenShared v;
  v.u = std::make_unique<Item>(Item{3, "three"});
  v.s = std::shared_ptr<Item>(v.u.get(), [](Item*) {});  // an alias that owns nothing
  const std::string e = decode_error<UniqueThenShared>(to_bytes(v));
  EXPECT_NE(e.find("no std::shared_ptr owns"), std::string::npos) << e;
}

TEST(SerdeObjectReferences, APointerToAnObjectHeldByValueIsRefused) {
  ValueThenRaw v;
  v.held = Item{4, "four"};
  v.raw = &v.held;
  const std::string e = decode_error<ValueThenRaw>(to_bytes(v));
  EXPECT_NE(e.find("an object held by value"), std::string::npos) << e;
}

// The fuzzer's finding, made by hand: every 4-byte position of two distinct objects' bytes set
// to 0, so the second pointer's object id may name the first object, of another class. Each
// such overwrite is an error naming it, or another value; never a crash.
TEST(SerdeObjectReferences, AReferenceToAnObjectOfAnotherClassIsRefused) {
  TwoClasses v;
  v.item = std::make_shared<Item>(Item{5, "five"});
  v.other = std::make_shared<Other>(Other{2.5});
  const std::vector<char> good = to_bytes(v);
  size_t refused = 0;
  for (size_t at = 0; at + sizeof(uint32_t) <= good.size(); ++at) {
    std::vector<char> bad = good;
    const uint32_t zero = 0;
    std::memcpy(bad.data() + at, &zero, sizeof zero);
    refused += decode_error<TwoClasses>(bad).find("an object of another class") !=
               std::string::npos;
  }
  EXPECT_GT(refused, 0u);
}

TEST(SerdeObjectReferences, AnObjectIdPastTheNextOneIsRefused) {
  TwoClasses v;
  v.item = std::make_shared<Item>(Item{6, "six"});
  const std::vector<char> good = to_bytes(v);
  size_t refused = 0;
  for (size_t at = 0; at + sizeof(uint32_t) <= good.size(); ++at) {
    std::vector<char> bad = good;
    const uint32_t far = 7;
    std::memcpy(bad.data() + at, &far, sizeof far);
    refused += decode_error<TwoClasses>(bad).find("where the next new object is") !=
               std::string::npos;
  }
  EXPECT_GT(refused, 0u);
}

}  // namespace
}  // namespace weft::serde
