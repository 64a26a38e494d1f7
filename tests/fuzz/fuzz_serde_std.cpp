// The hand-written codec for standard containers (weft/serialization.hpp,
// detail/serde_codec.hpp): raw values, strings, vectors, maps, sets, tuples, optionals, variants,
// arrays, nested, and vector<bool> (which takes the Boost path). Input: one byte choosing the
// type, then the encoded value. A value that decodes must re-encode to bytes that decode to an
// equal value (bytes equal for ordered types; values equal for the unordered ones).
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "fuzz_harness.hpp"
#include "weft/serialization.hpp"

namespace {

using namespace weft;

// sizeof ~1.5 KiB, at least 48 encoded bytes: a count must not become sizeof-times the input.
using WideRow = std::array<std::string, 48>;
// sizeof 625 KiB, at least 156 KiB encoded: a count checked against one byte per element would
// let a few KiB reserve gigabytes.
using HugeRow = std::array<std::string, 20000>;
using Nested = std::vector<std::map<std::string, std::vector<std::optional<int32_t>>>>;
using Variant = std::variant<int32_t, std::string, std::vector<double>, std::monostate>;

template <class T>
struct Case {
  using type = T;
  bool bytes_stable;  // false: iteration order may differ between equal values (unordered)
};

// The types, in selector order (the selector byte is taken modulo their number).
constexpr auto kCases = std::make_tuple(
    Case<int32_t>{true}, Case<bool>{true}, Case<std::string>{true},
    Case<std::vector<double>>{true}, Case<std::vector<std::string>>{true},
    Case<std::map<std::string, int64_t>>{true},
    Case<std::unordered_map<int32_t, std::vector<int32_t>>>{false},
    Case<std::set<std::string>>{true}, Case<std::multimap<int32_t, std::string>>{true},
    Case<std::tuple<int32_t, std::string, std::optional<double>>>{true},
    Case<std::optional<std::vector<std::string>>>{true}, Case<Variant>{true},
    Case<std::pair<std::string, std::vector<std::pair<int16_t, bool>>>>{true},
    Case<std::array<std::string, 3>>{true}, Case<Nested>{true}, Case<std::vector<bool>>{true},
    Case<std::tuple<>>{true}, Case<std::unordered_set<std::string>>{false},
    Case<std::vector<WideRow>>{true}, Case<std::u16string>{true}, Case<std::multiset<int64_t>>{true},
    Case<std::vector<std::tuple<>>>{true}, Case<std::vector<std::vector<std::vector<uint8_t>>>>{true},
    Case<std::map<int64_t, Variant>>{true}, Case<std::vector<HugeRow>>{true},
    Case<std::map<std::string, HugeRow>>{true});
constexpr size_t kNumCases = std::tuple_size_v<decltype(kCases)>;

template <class T>
void roundtrip(const char* p, size_t n, bool bytes_stable) {
  const T v = serde::from_bytes<T>(p, n);
  const std::vector<char> b1 = serde::to_bytes(v);
  const T v2 = serde::from_bytes<T>(b1);  // must not throw: these are the encoder's bytes
  const std::vector<char> b2 = serde::to_bytes(v2);
  if (bytes_stable) {
    WEFT_FUZZ_CHECK(b1 == b2);
  } else {
    WEFT_FUZZ_CHECK(v == v2);
    WEFT_FUZZ_CHECK(b1.size() == b2.size());
  }
}

void decode(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const size_t which = data[0] % kNumCases;
  const char* p = reinterpret_cast<const char*>(data + 1);
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((which == I ? roundtrip<typename std::tuple_element_t<I, decltype(kCases)>::type>(
                       p, size - 1, std::get<I>(kCases).bytes_stable)
                 : void()),
     ...);
  }(std::make_index_sequence<kNumCases>{});
}

template <class T>
fuzz::Seed seed(const std::string& name, const T& v) {
  constexpr size_t index = [] {
    size_t found = kNumCases;
    [&]<size_t... I>(std::index_sequence<I...>) {
      ((std::is_same_v<typename std::tuple_element_t<I, decltype(kCases)>::type, T> ? found = I
                                                                                   : 0),
       ...);
    }(std::make_index_sequence<kNumCases>{});
    return found;
  }();
  static_assert(index < kNumCases, "a seed of a type the target does not decode");
  std::vector<char> b{static_cast<char>(index)};
  const std::vector<char> body = serde::to_bytes(v);
  b.insert(b.end(), body.begin(), body.end());
  return {name, std::move(b)};
}

std::vector<fuzz::Seed> seeds() {
  WideRow row;
  for (size_t i = 0; i < row.size(); ++i) row[i] = std::string(i % 5, char('a' + i % 26));
  Nested nested{{{"a", {1, std::nullopt, 3}}, {"bb", {}}}, {}, {{"", {std::nullopt}}}};
  return {
      seed("int32", int32_t{-123456}),
      seed("bool", true),
      seed("string", std::string("hello, weft")),
      seed("vector_double", std::vector<double>{1.5, -2.25, 1e300, 0.0}),
      seed("vector_string", std::vector<std::string>{"a", "", "ccc", std::string(40, 'x')}),
      seed("map_string_int64", std::map<std::string, int64_t>{{"a", 1}, {"b", -2}, {"zz", 1 << 30}}),
      seed("unordered_map_int_vector",
           std::unordered_map<int32_t, std::vector<int32_t>>{{1, {1, 2}}, {7, {}}, {-3, {9}}}),
      seed("set_string", std::set<std::string>{"x", "yy", "zzz"}),
      seed("multimap_int_string", std::multimap<int32_t, std::string>{{1, "a"}, {1, "b"}, {2, "c"}}),
      seed("tuple_int_string_optional",
           std::tuple<int32_t, std::string, std::optional<double>>{7, "seven", 7.5}),
      seed("optional_vector_string",
           std::optional<std::vector<std::string>>{std::vector<std::string>{"p", "q"}}),
      seed("variant_string", Variant{std::string("alt")}),
      seed("variant_vector", Variant{std::vector<double>{1, 2, 3}}),
      seed("pair_nested", std::pair<std::string, std::vector<std::pair<int16_t, bool>>>{
                              "k", {{1, true}, {-2, false}}}),
      seed("array_string", std::array<std::string, 3>{"one", "two", "three"}),
      seed("nested", nested),
      seed("vector_bool", std::vector<bool>{true, false, true, true, false}),
      seed("tuple_empty", std::tuple<>{}),
      seed("unordered_set_string", std::unordered_set<std::string>{"m", "n", "o"}),
      seed("vector_wide_row", std::vector<WideRow>{row}),
      seed("u16string", std::u16string(u"wide")),
      seed("multiset_int64", std::multiset<int64_t>{1, 1, -5}),
      seed("vector_empty_tuples", std::vector<std::tuple<>>(5)),
      seed("vector3_bytes",
           std::vector<std::vector<std::vector<uint8_t>>>{{{1, 2}, {}}, {}, {{3}}}),
      seed("map_int_variant",
           std::map<int64_t, Variant>{{1, Variant{5}}, {2, Variant{std::monostate{}}}}),
  };
}

}  // namespace

WEFT_FUZZ_TARGET(seeds, decode)
