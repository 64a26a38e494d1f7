// The hand-written path of weft::serde: raw values, contiguous raw sequences, and the standard
// containers and wrappers of such values, encoded without a Boost archive. An archive costs about
// a microsecond to set up and tear down, far more than a typical task argument takes to copy, so
// every type built only from standard types and raw values takes this path; a type that contains
// anything with its own serialize goes through Boost as a whole (see weft/serialization.hpp).
//
// Wire format (native byte order): raw T = its bytes (zeroes for an empty T); sequence = u64
// count + elements (raw elements: one block); map/set = u64 count + entries; pair/tuple =
// members; optional = u8 flag + value; variant = u32 index + alternative. Every element takes at
// least min_bytes<E>() bytes, so a count is rejected before allocation when the bytes left cannot
// hold that many elements.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "weft/detail/serde_buffer.hpp"

namespace weft::serde {

template <class T>
struct is_raw;

namespace detail {

[[noreturn]] void throw_bad_length(const char* what, size_t length, size_t left);
[[noreturn]] void throw_bad_bool(unsigned value);
[[noreturn]] void throw_bad_variant_index(size_t index, size_t alternatives);
// Asks the kernel for 2 MiB pages over the whole 2 MiB pages inside [data, data + bytes), which
// must be fresh, untouched memory to help (src/serde/huge_pages.cpp).
void prefer_huge_pages(void* data, size_t bytes);
// Raw sequences at least this large are decoded into memory given that advice.
inline constexpr size_t kHugePageDecodeBytes = size_t{4} << 20;

// hand<T>::value says whether a non-raw T takes the hand path; hand<T>::encode/decode do the work.
template <class T>
struct hand : std::false_type {};

template <class T>
inline constexpr bool hand_v = is_raw<T>::value || hand<T>::value;

// The fewest bytes any value of T encodes to. A count of elements is checked against the bytes
// left divided by this, so that what a count makes the decoder reserve stays within a small
// factor (sizeof / min_bytes) of the input's size, whatever the element type.
template <class T>
constexpr size_t min_bytes() {
  if constexpr (is_raw<T>::value) {
    return sizeof(T);
  } else {
    return hand<T>::kMinBytes;
  }
}

// One value of a type with hand_v: raw bytes, or hand<T>.
template <class T>
void encode_one(Buffer& out, const T& v);
template <class T>
void decode_one(Reader& in, T& v);

inline void encode_count(Buffer& out, size_t n) {
  const uint64_t count = n;
  out.append(&count, sizeof count);
}
// Reads a count of elements that take at least min_bytes each, and checks it against the input.
inline size_t decode_count(Reader& in, size_t min_bytes, const char* what) {
  uint64_t count = 0;
  in.read(&count, sizeof count);
  if (count > in.remaining() / min_bytes) throw_bad_length(what, count, in.remaining());
  return static_cast<size_t>(count);
}

template <class T>
T decode_raw(Reader& in) {
  if constexpr (std::is_same_v<T, bool>) {
    unsigned char c = 0;
    in.read(&c, 1);
    if (c > 1) throw_bad_bool(c);
    return c != 0;
  } else {
    std::array<unsigned char, sizeof(T)> bytes;
    in.read(bytes.data(), sizeof(T));
    return std::bit_cast<T>(bytes);  // no default constructor needed
  }
}

// Decodes a T into a fresh value (raw types need no default constructor).
template <class T>
T decode_value(Reader& in) {
  if constexpr (is_raw<T>::value) {
    return decode_raw<T>(in);
  } else {
    T v{};
    decode_one(in, v);
    return v;
  }
}

// Contiguous sequences: raw elements are one block; others are encoded one by one.
template <class Seq>
inline constexpr bool std_allocated = false;
template <class T>
inline constexpr bool std_allocated<std::vector<T, std::allocator<T>>> = true;
template <class C, class Tr>
inline constexpr bool std_allocated<std::basic_string<C, Tr, std::allocator<C>>> = true;

// s = [first, first + n), in one pass over the bytes (no zero-filling resize before the copy).
template <class Seq, class E>
void assign_elements(Seq& s, const E* first, size_t n) {
  if constexpr (std_allocated<Seq>) {
    // A large target is a fresh mapping: reserve it untouched and advise huge pages before the
    // copy faults it in (a by-value task argument of 64 MiB, say).
    if (n * sizeof(E) >= kHugePageDecodeBytes && s.capacity() < n) {
      s = Seq();
      s.reserve(n);
      prefer_huge_pages(static_cast<void*>(s.data()), n * sizeof(E));
    }
  }
  s.assign(first, first + n);
}

template <class Seq, class E, bool kDecodable>
struct hand_sequence : std::bool_constant<hand_v<E>> {
  static constexpr size_t kMinBytes = sizeof(uint64_t);
  static void encode(Buffer& out, const Seq& s) {
    encode_count(out, s.size());
    if constexpr (is_raw<E>::value && std::is_empty_v<E>) {
      out.grow(s.size() * sizeof(E));  // zeroes: an empty object's bytes are padding (below)
    } else if constexpr (is_raw<E>::value) {
      out.append(s.data(), s.size() * sizeof(E));
    } else {
      for (const E& e : s) encode_one(out, e);
    }
  }
  static void decode(Reader& in, Seq& s) {
    static_assert(kDecodable,
                  "a span or string_view does not own its bytes: decode a vector or string");
    if constexpr (kDecodable) {
      if constexpr (is_raw<E>::value) {
        size_t n = decode_count(in, sizeof(E), "element count");
        // The count was checked against the input. One pass over the bytes when they are
        // aligned for E (a value in the node store is).
        const char* p = in.skip(n * sizeof(E));
        if (reinterpret_cast<uintptr_t>(p) % alignof(E) == 0) {
          assign_elements(s, reinterpret_cast<const E*>(p), n);
        } else {
          s.resize(n);
          if (n) std::memcpy(static_cast<void*>(s.data()), p, n * sizeof(E));
        }
      } else {
        size_t n = decode_count(in, min_bytes<E>(), "element count");
        s.clear();
        s.reserve(n);
        for (size_t i = 0; i < n; ++i) s.push_back(decode_value<E>(in));
      }
    }
  }
};

template <class T, class A>
struct hand<std::vector<T, A>> : hand_sequence<std::vector<T, A>, T, true> {};
template <class A>
struct hand<std::vector<bool, A>> : std::false_type {};  // bit-packed: Boost handles it
template <class C, class Tr, class A>
struct hand<std::basic_string<C, Tr, A>> : hand_sequence<std::basic_string<C, Tr, A>, C, true> {
  static_assert(is_raw<C>::value);
};
template <class C, class Tr>
struct hand<std::basic_string_view<C, Tr>>
    : hand_sequence<std::basic_string_view<C, Tr>, C, false> {};
template <class T, size_t N>
struct hand<std::span<T, N>> : hand_sequence<std::span<T, N>, std::remove_const_t<T>, false> {};

// std::array of non-raw elements (an array of raw elements is raw itself).
template <class T, size_t N>
struct hand<std::array<T, N>> : std::bool_constant<hand_v<T>> {
  static constexpr size_t kMinBytes = N == 0 ? 1 : N * min_bytes<T>();
  static void encode(Buffer& out, const std::array<T, N>& a) {
    for (const T& e : a) encode_one(out, e);
  }
  static void decode(Reader& in, std::array<T, N>& a) {
    for (T& e : a) decode_one(in, e);
  }
};

// Associative containers: count + entries, inserted at the end (sorted input inserts in O(1)).
template <class C, class K, class V>
struct hand_map : std::bool_constant<hand_v<K> && hand_v<V>> {
  static constexpr size_t kMinBytes = sizeof(uint64_t);
  static void encode(Buffer& out, const C& m) {
    encode_count(out, m.size());
    for (const auto& [k, v] : m) {
      encode_one(out, k);
      encode_one(out, v);
    }
  }
  static void decode(Reader& in, C& m) {
    size_t n = decode_count(in, min_bytes<K>() + min_bytes<V>(), "map size");
    m.clear();
    if constexpr (requires { m.reserve(n); }) m.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      K k = decode_value<K>(in);
      V v = decode_value<V>(in);
      m.emplace_hint(m.end(), std::move(k), std::move(v));
    }
  }
};
template <class C, class K>
struct hand_set : std::bool_constant<hand_v<K>> {
  static constexpr size_t kMinBytes = sizeof(uint64_t);
  static void encode(Buffer& out, const C& s) {
    encode_count(out, s.size());
    for (const K& k : s) encode_one(out, k);
  }
  static void decode(Reader& in, C& s) {
    size_t n = decode_count(in, min_bytes<K>(), "set size");
    s.clear();
    if constexpr (requires { s.reserve(n); }) s.reserve(n);
    for (size_t i = 0; i < n; ++i) s.emplace_hint(s.end(), decode_value<K>(in));
  }
};
template <class K, class V, class Cmp, class A>
struct hand<std::map<K, V, Cmp, A>> : hand_map<std::map<K, V, Cmp, A>, K, V> {};
template <class K, class V, class Cmp, class A>
struct hand<std::multimap<K, V, Cmp, A>> : hand_map<std::multimap<K, V, Cmp, A>, K, V> {};
template <class K, class V, class H, class E, class A>
struct hand<std::unordered_map<K, V, H, E, A>> : hand_map<std::unordered_map<K, V, H, E, A>, K, V> {
};
template <class K, class Cmp, class A>
struct hand<std::set<K, Cmp, A>> : hand_set<std::set<K, Cmp, A>, K> {};
template <class K, class Cmp, class A>
struct hand<std::multiset<K, Cmp, A>> : hand_set<std::multiset<K, Cmp, A>, K> {};
template <class K, class H, class E, class A>
struct hand<std::unordered_set<K, H, E, A>> : hand_set<std::unordered_set<K, H, E, A>, K> {};

template <class A, class B>
struct hand<std::pair<A, B>> : std::bool_constant<hand_v<A> && hand_v<B>> {
  static constexpr size_t kMinBytes = min_bytes<A>() + min_bytes<B>();
  static void encode(Buffer& out, const std::pair<A, B>& p) {
    encode_one(out, p.first);
    encode_one(out, p.second);
  }
  static void decode(Reader& in, std::pair<A, B>& p) {
    decode_one(in, p.first);
    decode_one(in, p.second);
  }
};

template <class... Ts>
struct hand<std::tuple<Ts...>> : std::bool_constant<(hand_v<Ts> && ...)> {
  static constexpr size_t kMinBytes = sizeof...(Ts) == 0 ? 1 : (min_bytes<Ts>() + ... + 0);
  static void encode(Buffer& out, const std::tuple<Ts...>& t) {
    if constexpr (sizeof...(Ts) == 0) {
      const uint8_t marker = 0;  // one byte, like every element (see decode_count)
      out.append(&marker, 1);
    } else {
      std::apply([&out](const auto&... e) { (encode_one(out, e), ...); }, t);
    }
  }
  static void decode(Reader& in, std::tuple<Ts...>& t) {
    if constexpr (sizeof...(Ts) == 0) {
      in.skip(1);
    } else {
      std::apply([&in](auto&... e) { (decode_one(in, e), ...); }, t);
    }
  }
};

template <class T>
struct hand<std::optional<T>> : std::bool_constant<hand_v<T>> {
  static constexpr size_t kMinBytes = 1;
  static void encode(Buffer& out, const std::optional<T>& o) {
    const bool engaged = o.has_value();
    out.append(&engaged, 1);
    if (engaged) encode_one(out, *o);
  }
  static void decode(Reader& in, std::optional<T>& o) {
    if (!decode_raw<bool>(in)) {
      o.reset();
    } else if constexpr (is_raw<T>::value) {
      o.emplace(decode_raw<T>(in));
    } else {
      if (!o.has_value()) o.emplace();
      decode_one(in, *o);
    }
  }
};

template <class... Ts>
struct hand<std::variant<Ts...>> : std::bool_constant<(hand_v<Ts> && ...)> {
  static constexpr size_t kMinBytes = sizeof(uint32_t);
  static void encode(Buffer& out, const std::variant<Ts...>& v) {
    const uint32_t index = static_cast<uint32_t>(v.index());  // npos (valueless) fails decode
    out.append(&index, sizeof index);
    if (!v.valueless_by_exception()) {
      std::visit([&out](const auto& alt) { encode_one(out, alt); }, v);
    }
  }
  static void decode(Reader& in, std::variant<Ts...>& v) {
    uint32_t index = 0;
    in.read(&index, sizeof index);
    if (index >= sizeof...(Ts)) throw_bad_variant_index(index, sizeof...(Ts));
    [&]<size_t... I>(std::index_sequence<I...>) {
      ((index == I ? (load_alternative<I>(in, v), 0) : 0), ...);
    }
    (std::index_sequence_for<Ts...>{});
  }
  template <size_t I>
  static void load_alternative(Reader& in, std::variant<Ts...>& v) {
    using Alt = std::variant_alternative_t<I, std::variant<Ts...>>;
    if constexpr (is_raw<Alt>::value) {
      v.template emplace<I>(decode_raw<Alt>(in));
    } else {
      decode_one(in, v.template emplace<I>());
    }
  }
};

template <class T>
void encode_one(Buffer& out, const T& v) {
  if constexpr (is_raw<T>::value && std::is_empty_v<T>) {
    // The bytes of an empty object (std::monostate, std::tuple<>, tags) are padding, never
    // written: copying them would send whatever the stack held. Zeroes instead, as many.
    out.grow(sizeof(T));
  } else if constexpr (is_raw<T>::value) {
    out.append(&v, sizeof(T));
  } else {
    hand<T>::encode(out, v);
  }
}

template <class T>
void decode_one(Reader& in, T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    v = decode_raw<bool>(in);
  } else if constexpr (is_raw<T>::value) {
    in.read(&v, sizeof(T));
  } else {
    hand<T>::decode(in, v);
  }
}

}  // namespace detail
}  // namespace weft::serde
