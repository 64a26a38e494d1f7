// Decoding failures: truncated, corrupt or mistyped input and bogus lengths must raise
// weft::SerializationError naming the type and the reason, never crash, overread or allocate
// what the bogus length asks for.
#include "weft/errors.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <array>
#include <boost/serialization/unique_ptr.hpp>
#include <memory>
#include <new>
#include <tuple>

#include "weft/serialization.hpp"

namespace weft::serde {
namespace {

// A user type: anything containing it goes through a Boost archive.
struct Tagged {
  int v = 0;
  std::string s;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& v& s;
  }
  bool operator==(const Tagged&) const = default;
};

// The message of the SerializationError that decoding `bytes` as T raises ("" if none).
template <class T>
std::string decode_error(const std::vector<char>& bytes) {
  try {
    from_bytes<T>(bytes.data(), bytes.size());
  } catch (const SerializationError& e) {
    return e.what();
  }
  ADD_FAILURE() << "decoding succeeded";
  return "";
}

std::vector<char> cut(std::vector<char> bytes, size_t n) {
  bytes.resize(n);
  return bytes;
}

template <class T>
void overwrite(std::vector<char>& bytes, size_t at, T value) {
  ASSERT_LE(at + sizeof(T), bytes.size());
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

TEST(SerdeErrors, TruncatedRawValueNamesTheTypeAndTheShortfall) {
  std::string msg = decode_error<int64_t>(cut(to_bytes(int64_t{1}), 4));
  EXPECT_NE(msg.find("cannot decode long"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated input: needed 8 bytes at offset 0 but only 4 remain"),
            std::string::npos)
      << msg;
}

TEST(SerdeErrors, TruncatedVectorOfRaw) {
  std::vector<char> bytes = to_bytes(std::vector<double>{1, 2, 3});
  std::string msg = decode_error<std::vector<double>>(cut(bytes, bytes.size() - 1));
  EXPECT_NE(msg.find("std::vector<double"), std::string::npos) << msg;
  EXPECT_NE(msg.find("element count 3 is larger than"), std::string::npos) << msg;
  msg = decode_error<std::vector<double>>(cut(bytes, 5));
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

template <class T>
void expect_every_prefix_rejected(const T& value) {
  std::vector<char> bytes = to_bytes(value);
  ASSERT_EQ(from_bytes<T>(bytes), value);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string msg = decode_error<T>(cut(bytes, n));
    EXPECT_NE(msg.find("cannot decode std::map<"), std::string::npos) << "prefix " << n << msg;
  }
}

TEST(SerdeErrors, EveryPrefixIsRejectedOnTheHandPath) {
  expect_every_prefix_rejected(std::map<std::string, std::vector<std::optional<int>>>{
      {"alpha", {1, std::nullopt, 3}}, {"beta", {}}, {"gamma", {std::nullopt}}});
}

TEST(SerdeErrors, EveryPrefixIsRejectedOnTheBoostPath) {
  expect_every_prefix_rejected(std::map<std::string, std::vector<std::optional<Tagged>>>{
      {"alpha", {Tagged{1, "x"}, std::nullopt}}, {"beta", {}}});
}

TEST(SerdeErrors, HugeLengthOfRawVectorIsRejectedBeforeAllocating) {
  std::vector<char> bytes = to_bytes(std::vector<double>{1.0});
  overwrite<uint64_t>(bytes, 0, uint64_t{1} << 60);
  std::string msg = decode_error<std::vector<double>>(bytes);
  EXPECT_NE(msg.find("element count 1152921504606846976 is larger than the 8 bytes left"),
            std::string::npos)
      << msg;
  bytes = to_bytes(std::string("abc"));
  overwrite<uint64_t>(bytes, 0, uint64_t{1} << 40);  // would be a 1 TiB string
  msg = decode_error<std::string>(bytes);
  EXPECT_NE(msg.find("element count"), std::string::npos) << msg;
}

TEST(SerdeErrors, HugeMapSizeIsRejected) {
  using M = std::map<int, int>;
  std::vector<char> bytes = to_bytes(M{{1, 2}});
  overwrite<uint64_t>(bytes, 0, uint64_t{1} << 50);
  std::string msg = decode_error<M>(bytes);
  EXPECT_NE(msg.find("map size 1125899906842624 is larger than the 8 bytes left"),
            std::string::npos)
      << msg;
}

TEST(SerdeErrors, HugeCollectionSizeInsideBoostIsRejected) {
  using M = std::map<int, Tagged>;
  std::vector<char> bytes = to_bytes(M{{1, Tagged{2, "t"}}});
  // Boost writes the map's class info (5 bytes), then its element count as a u64.
  size_t at = 0;
  for (uint64_t v = 0; at + 8 <= bytes.size(); ++at) {
    std::memcpy(&v, bytes.data() + at, sizeof v);
    if (v == 1) break;
  }
  ASSERT_LT(at + 8, bytes.size());
  overwrite<uint64_t>(bytes, at, uint64_t{1} << 50);
  std::string msg = decode_error<M>(bytes);
  EXPECT_NE(msg.find("collection size 1125899906842624 is larger than"), std::string::npos) << msg;
}

TEST(SerdeErrors, HugeStringLengthInsideBoostIsRejected) {
  using V = std::vector<Tagged>;
  std::vector<char> bytes = to_bytes(V{Tagged{1, "abcdef"}});
  // Find the string's length field: a u64 6 directly followed by the characters.
  std::string hay(bytes.begin(), bytes.end());
  size_t at = hay.find("abcdef");
  ASSERT_NE(at, std::string::npos);
  ASSERT_GE(at, 8u);
  overwrite<uint64_t>(bytes, at - 8, uint64_t{1} << 45);
  std::string msg = decode_error<V>(bytes);
  EXPECT_NE(msg.find("string length 35184372088832 is larger than the 6 bytes left"),
            std::string::npos)
      << msg;
}

TEST(SerdeErrors, TrailingBytesMeanAnotherType) {
  std::vector<char> bytes = to_bytes(int64_t{7});
  std::string msg = decode_error<int32_t>(bytes);
  EXPECT_NE(msg.find("decoding int left 4 of 8 bytes unread"), std::string::npos) << msg;
}

TEST(SerdeErrors, WrongTypeIsDetectedWhenLengthsDisagree) {
  std::vector<char> bytes = to_bytes(std::string("hello"));
  std::string msg = decode_error<std::vector<double>>(bytes);
  EXPECT_NE(msg.find("element count 5 is larger than the 5 bytes left"), std::string::npos) << msg;
}

TEST(SerdeErrors, CorruptBoolAndVariantIndex) {
  std::vector<char> b{2};
  EXPECT_NE(decode_error<bool>(b).find("invalid bool byte 2"), std::string::npos);

  std::vector<char> opt = to_bytes(std::optional<std::string>("x"));
  opt[0] = 7;  // the presence flag
  EXPECT_NE(decode_error<std::optional<std::string>>(opt).find("invalid bool byte 7"),
            std::string::npos);
  // Inside a Boost archive: corrupt each byte that holds 1 until one of them is the flag.
  std::vector<char> bopt = to_bytes(std::optional<Tagged>(Tagged{}));
  bool seen = false;
  for (size_t i = 0; i < bopt.size(); ++i) {
    if (bopt[i] != 1) continue;
    std::vector<char> bad = bopt;
    bad[i] = 7;
    try {
      from_bytes<std::optional<Tagged>>(bad);
    } catch (const SerializationError& e) {
      seen |= std::string(e.what()).find("invalid bool byte 7") != std::string::npos;
    }
  }
  EXPECT_TRUE(seen);
}

template <class V>
void expect_bad_variant_index_rejected() {
  std::vector<char> var = to_bytes(V{std::in_place_index<1>});
  std::string hay(var.begin(), var.end());
  size_t at = hay.find(std::string("\x01\x00\x00\x00", 4));  // the u32 index 1
  ASSERT_NE(at, std::string::npos);
  overwrite<uint32_t>(var, at, 9);
  std::string msg = decode_error<V>(var);
  EXPECT_NE(msg.find("alternative index 9 out of range (2 alternatives)"), std::string::npos)
      << msg;
}

TEST(SerdeErrors, CorruptVariantIndex) {
  expect_bad_variant_index_rejected<std::variant<int, std::string>>();
  expect_bad_variant_index_rejected<std::variant<int, Tagged>>();
}

template <class T>
void expect_random_corruption_survived(const T& value) {
  const std::vector<char> good = to_bytes(value);
  std::mt19937 rng(12345);
  int errors = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<char> bad = good;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    try {
      from_bytes<T>(bad);
    } catch (const SerializationError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);  // some corruptions decode to a different valid value; none may crash
}

TEST(SerdeErrors, RandomCorruptionNeverCrashes) {
  using V = std::variant<int, std::string, std::vector<float>>;
  expect_random_corruption_survived(std::map<std::string, std::vector<V>>{
      {"a", {1, std::string("two"), std::vector<float>{3, 4}}}, {"bb", {}}});
  expect_random_corruption_survived(std::map<std::string, std::vector<std::variant<int, Tagged>>>{
      {"a", {1, Tagged{2, "two"}}}, {"bb", {}}});
}

struct Picky {
  int n = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& n;
    if (n < 0) throw std::invalid_argument("negative n");
  }
};

TEST(SerdeErrors, ExceptionFromUserSerializeBecomesSerializationError) {
  Buffer out;
  encode(out, 1);
  const size_t before = out.size();
  try {
    encode(out, Picky{-1});
    FAIL();
  } catch (const SerializationError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("cannot encode weft::serde::(anonymous namespace)::Picky"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("std::invalid_argument from serialize: negative n"), std::string::npos)
        << msg;
  }
  EXPECT_EQ(out.size(), before);  // the failed value left nothing behind

  std::vector<char> bytes = to_bytes(Picky{5});
  // Make n negative in the bytes: the int is the last field.
  overwrite<int>(bytes, bytes.size() - sizeof(int), -3);
  std::string msg = decode_error<Picky>(bytes);
  EXPECT_NE(msg.find("negative n"), std::string::npos) << msg;
}

TEST(SerdeErrors, ReaderChecksEveryRead) {
  char data[4] = {1, 2, 3, 4};
  Reader in(data, sizeof data);
  EXPECT_EQ(in.skip(3), data);
  char c;
  EXPECT_THROW(in.read(&c, 2), SerializationError);
  EXPECT_THROW(in.skip(2), SerializationError);
  in.read(&c, 1);
  EXPECT_EQ(c, 4);
  EXPECT_TRUE(in.done());
}

// A count is checked against the fewest bytes an element can take, not one byte per element:
// otherwise a few KiB could make the decoder reserve gigabytes of large elements (found by
// tests/fuzz serde_std: 9 bytes asked for 2.6 GB).
TEST(SerdeErrors, ACountIsCheckedAgainstTheSmallestEncodingOfItsElements) {
  using Row = std::array<std::string, 20000>;  // 625 KiB each, at least 156 KiB encoded
  std::vector<char> bytes(sizeof(uint64_t) + 5000, 0);
  overwrite<uint64_t>(bytes, 0, 4096);
  std::string msg = decode_error<std::vector<Row>>(bytes);
  EXPECT_NE(msg.find("element count 4096 is larger than"), std::string::npos) << msg;
  overwrite<uint64_t>(bytes, 0, 1);
  msg = decode_error<std::map<std::string, Row>>(bytes);
  EXPECT_NE(msg.find("map size 1 is larger than"), std::string::npos) << msg;
  // Values that fit still decode.
  std::vector<std::array<std::string, 3>> small{{"a", "b", "c"}, {"", "", "d"}};
  EXPECT_EQ(from_bytes<decltype(small)>(to_bytes(small)), small);
}

// An empty object's byte is padding nobody wrote: the encoding is a zero, not what the stack held
// (found by tests/fuzz serde_std: std::tuple<> re-encoded to different bytes).
TEST(SerdeErrors, EmptyValuesEncodeZeroesNotTheirPadding) {
  alignas(std::monostate) unsigned char storage[sizeof(std::monostate)];
  std::memset(storage, 0xAB, sizeof storage);
  const auto* m = new (storage) std::monostate;  // default-initialised: its byte stays 0xAB
  EXPECT_EQ(to_bytes(*m), std::vector<char>(sizeof(std::monostate), 0));
  alignas(std::tuple<>) unsigned char t_storage[sizeof(std::tuple<>)];
  std::memset(t_storage, 0xCD, sizeof t_storage);
  const auto* t = new (t_storage) std::tuple<>;
  EXPECT_EQ(to_bytes(*t), std::vector<char>(sizeof(std::tuple<>), 0));
  std::vector<std::monostate> several(3);
  std::memset(static_cast<void*>(several.data()), 0xEF, several.size());
  const std::vector<char> bytes = to_bytes(several);
  ASSERT_EQ(bytes.size(), sizeof(uint64_t) + 3);
  EXPECT_EQ(std::vector<char>(bytes.begin() + sizeof(uint64_t), bytes.end()),
            std::vector<char>(3, 0));
}

struct Owner {
  std::unique_ptr<Tagged> first;
  std::unique_ptr<Tagged> second;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& first& second;
  }
};

// Boost 1.74 indexes its class table with the class id before an object behind a pointer without
// checking it; weft's archive does (found by tests/fuzz serde_archive: a null dereference inside
// libboost_serialization). Every class-id-sized overwrite of the bytes is an error or a value,
// never a crash.
TEST(SerdeErrors, ACorruptClassIdBehindAPointerIsAnError) {
  Owner o;
  o.first = std::make_unique<Tagged>(Tagged{1, "one"});
  o.second = std::make_unique<Tagged>(Tagged{2, "two"});
  const std::vector<char> good = to_bytes(o);
  ASSERT_EQ(from_bytes<Owner>(good).second->s, "two");
  size_t class_id_errors = 0;
  for (size_t at = 0; at + sizeof(int16_t) <= good.size(); ++at) {
    for (int16_t id : {int16_t{-2}, int16_t{3}, int16_t{0x7000}}) {
      std::vector<char> bad = good;
      overwrite<int16_t>(bad, at, id);
      try {
        from_bytes<Owner>(bad);
      } catch (const SerializationError& e) {
        class_id_errors += std::string(e.what()).find("class id") != std::string::npos;
      }
    }
  }
  EXPECT_GT(class_id_errors, 0u);
}

}  // namespace
}  // namespace weft::serde
