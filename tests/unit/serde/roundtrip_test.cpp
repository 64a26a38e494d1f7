// Round trips of the types the runtime sends between ranks, and the shape of the raw fast path.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "weft/serialization.hpp"

namespace weft::serde {
namespace {

template <class T>
T round_trip(const T& v) {
  std::vector<char> bytes = to_bytes(v);
  return from_bytes<T>(bytes.data(), bytes.size());
}

struct Pod {
  int32_t a;
  double b;
  char c[3];
  bool operator==(const Pod&) const = default;
};

TEST(SerdeRaw, ScalarsAndPodsAreExactlyTheirBytes) {
  EXPECT_TRUE(is_raw_v<int>);
  EXPECT_TRUE(is_raw_v<Pod>);
  EXPECT_EQ(to_bytes(int64_t{42}).size(), sizeof(int64_t));
  EXPECT_EQ(to_bytes(3.5).size(), sizeof(double));
  Pod p{7, 2.5, {'x', 'y', 'z'}};
  std::vector<char> bytes = to_bytes(p);
  ASSERT_EQ(bytes.size(), sizeof(Pod));
  EXPECT_EQ(std::memcmp(bytes.data(), &p, sizeof(Pod)), 0);
  EXPECT_EQ(round_trip(p), p);
  EXPECT_EQ(round_trip(int64_t{-5}), -5);
  EXPECT_EQ(round_trip(true), true);
  EXPECT_EQ(round_trip(std::array<int, 3>{1, 2, 3}), (std::array<int, 3>{1, 2, 3}));
  EXPECT_EQ(to_bytes(std::array<int, 3>{1, 2, 3}).size(), 3 * sizeof(int));
}

TEST(SerdeRaw, PointersViewsAndSerializableTypesAreNotRaw) {
  EXPECT_FALSE(is_raw_v<int*>);
  EXPECT_FALSE(is_raw_v<int* [2]>);
  EXPECT_FALSE(is_raw_v<int Pod::*>);
  EXPECT_FALSE(is_raw_v<std::string_view>);
  EXPECT_FALSE(is_raw_v<std::span<const int>>);
  EXPECT_FALSE(is_raw_v<std::string>);
}

TEST(SerdeRaw, VectorOfRawIsCountPlusOneCopy) {
  std::vector<double> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i * 0.5;
  std::vector<char> bytes = to_bytes(v);
  ASSERT_EQ(bytes.size(), sizeof(uint64_t) + v.size() * sizeof(double));
  uint64_t n;
  std::memcpy(&n, bytes.data(), sizeof n);
  EXPECT_EQ(n, v.size());
  EXPECT_EQ(std::memcmp(bytes.data() + 8, v.data(), v.size() * sizeof(double)), 0);
  EXPECT_EQ(round_trip(v), v);
  EXPECT_EQ(round_trip(std::vector<Pod>{{1, 2, {}}, {3, 4, {}}}),
            (std::vector<Pod>{{1, 2, {}}, {3, 4, {}}}));
  EXPECT_EQ(round_trip(std::vector<int>{}), std::vector<int>{});
}

TEST(SerdeRaw, StringsAreCountPlusBytes) {
  std::string s = "hello, weft";
  EXPECT_EQ(to_bytes(s).size(), sizeof(uint64_t) + s.size());
  EXPECT_EQ(round_trip(s), s);
  EXPECT_EQ(round_trip(std::string()), "");
  EXPECT_EQ(round_trip(std::string(100000, 'q')), std::string(100000, 'q'));
  EXPECT_EQ(round_trip(std::u16string(u"wide")), u"wide");
}

TEST(SerdeRaw, ViewsEncodeLikeTheOwningContainer) {
  std::string_view sv = "abc";
  std::vector<char> bytes = to_bytes(sv);
  EXPECT_EQ(bytes, to_bytes(std::string("abc")));
  EXPECT_EQ(from_bytes<std::string>(bytes.data(), bytes.size()), "abc");
  std::vector<int> v{4, 5, 6};
  std::vector<char> span_bytes = to_bytes(std::span<const int>(v));
  EXPECT_EQ(span_bytes, to_bytes(v));
  EXPECT_EQ(from_bytes<std::vector<int>>(span_bytes), v);
}

TEST(SerdeBoost, StandardContainers) {
  EXPECT_EQ(round_trip(std::vector<std::string>{"a", "", "ccc"}),
            (std::vector<std::string>{"a", "", "ccc"}));
  std::map<std::string, int> m{{"one", 1}, {"two", 2}};
  EXPECT_EQ(round_trip(m), m);
  std::unordered_map<int, std::string> um{{1, "x"}, {2, "y"}, {3, ""}};
  EXPECT_EQ(round_trip(um), um);
  EXPECT_EQ(round_trip(std::set<int>{3, 1, 2}), (std::set<int>{1, 2, 3}));
  EXPECT_EQ(round_trip(std::unordered_set<std::string>{"p", "q"}),
            (std::unordered_set<std::string>{"p", "q"}));
  EXPECT_EQ(round_trip(std::pair<int, std::string>{1, "z"}), (std::pair<int, std::string>{1, "z"}));
  EXPECT_EQ(round_trip(std::list<int>{1, 2}), (std::list<int>{1, 2}));
  EXPECT_EQ(round_trip(std::deque<double>{1.5}), (std::deque<double>{1.5}));
  EXPECT_EQ(round_trip(std::vector<bool>{true, false, true}),
            (std::vector<bool>{true, false, true}));
}

TEST(SerdeBoost, TupleOptionalVariantMonostate) {
  auto t = std::make_tuple(1, std::string("two"), 3.0);
  EXPECT_EQ(round_trip(t), t);
  EXPECT_EQ(round_trip(std::tuple<>{}), std::tuple<>{});
  std::optional<std::string> some = "here", none;
  EXPECT_EQ(round_trip(some), some);
  EXPECT_EQ(round_trip(none), none);
  using V = std::variant<std::monostate, int, std::string, std::vector<double>>;
  for (const V& v : {V{}, V{7}, V{std::string("s")}, V{std::vector<double>{1, 2}}}) {
    EXPECT_EQ(round_trip(v), v);
  }
  EXPECT_EQ(round_trip(std::monostate{}), std::monostate{});
  std::vector<std::monostate> ms(5);
  EXPECT_EQ(round_trip(ms).size(), 5u);
  std::optional<std::tuple<int, std::string>> ot = std::make_tuple(5, std::string("five"));
  EXPECT_EQ(round_trip(ot), ot);
}

TEST(SerdeBoost, NestedCombinations) {
  std::vector<std::map<std::string, std::vector<double>>> v{
      {{"x", {1, 2, 3}}, {"y", {}}}, {}, {{"z", {4.5}}}};
  EXPECT_EQ(round_trip(v), v);
  std::map<std::string, Pod> pods{{"p", {1, 2, {'a', 'b', 'c'}}}};
  EXPECT_EQ(round_trip(pods), pods);
  std::vector<std::optional<std::variant<int, std::string>>> mixed{
      std::nullopt, std::variant<int, std::string>{3}, std::variant<int, std::string>{"s"}};
  EXPECT_EQ(round_trip(mixed), mixed);
  std::vector<std::vector<int>> vv{{1}, {}, {2, 3}};
  EXPECT_EQ(round_trip(vv), vv);
}

TEST(SerdeHand, StandardTypesSkipBoostAndUseTheDocumentedLayout) {
  static_assert(detail::hand_v<std::map<std::string, std::vector<std::optional<int>>>>);
  static_assert(detail::hand_v<std::tuple<int, std::string, std::variant<int, double>>>);
  static_assert(!detail::hand_v<std::vector<bool>>);
  // map<string,int>{{"ab", 7}}: u64 count, u64 length, "ab", int.
  std::vector<char> bytes = to_bytes(std::map<std::string, int>{{"ab", 7}});
  ASSERT_EQ(bytes.size(), 8u + 8u + 2u + 4u);
  EXPECT_EQ(std::string(bytes.data() + 16, 2), "ab");
  // An optional of a raw type is raw itself: its bytes, nothing more.
  EXPECT_EQ(to_bytes(std::optional<int>(3)).size(), sizeof(std::optional<int>));
  EXPECT_EQ(round_trip(std::optional<int>(3)), 3);
  // Non-raw optional: a flag byte, then the value.
  EXPECT_EQ(to_bytes(std::optional<std::string>("x")).size(), 1u + 8u + 1u);
}

TEST(SerdeHand, MoreContainers) {
  std::multimap<int, std::string> mm{{1, "a"}, {1, "b"}, {2, "c"}};
  EXPECT_EQ(round_trip(mm), mm);
  std::multiset<std::string> ms{"x", "x", "y"};
  EXPECT_EQ(round_trip(ms), ms);
  std::array<std::string, 2> as{"p", "q"};
  EXPECT_EQ(round_trip(as), as);
  std::vector<std::tuple<>> empties(4);
  EXPECT_EQ(round_trip(empties).size(), 4u);
  std::unordered_map<std::string, std::set<int>> ums{{"k", {1, 2}}, {"l", {}}};
  EXPECT_EQ(round_trip(ums), ums);
  std::vector<std::pair<std::string, std::vector<int>>> pv{{"a", {1}}, {"", {}}};
  EXPECT_EQ(round_trip(pv), pv);
}

TEST(SerdeStream, SeveralValuesShareOneBuffer) {
  Buffer out;
  encode(out, 5);
  encode(out, std::string("mid"));
  encode(out, std::map<int, int>{{1, 2}});
  encode(out, std::vector<float>{1.f, 2.f});
  Reader in(out.data(), out.size());
  EXPECT_EQ(decode<int>(in), 5);
  EXPECT_EQ(decode<std::string>(in), "mid");
  EXPECT_EQ((decode<std::map<int, int>>(in)), (std::map<int, int>{{1, 2}}));
  std::vector<float> f;
  decode(in, f);
  EXPECT_EQ(f, (std::vector<float>{1.f, 2.f}));
  EXPECT_TRUE(in.done());
}

TEST(SerdeStream, BufferTakeMovesTheBytesOut) {
  Buffer out;
  out.append("abc", 3);
  char* p = out.grow(2);
  p[0] = 'd';
  p[1] = 'e';
  EXPECT_EQ(out.size(), 5u);
  std::vector<char> bytes = out.take();
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "abcde");
  EXPECT_EQ(out.size(), 0u);
}

}  // namespace
}  // namespace weft::serde
