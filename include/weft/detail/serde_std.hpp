// Boost.Serialization support for the standard types Boost 1.74 lacks (std::tuple, std::optional,
// std::variant) and for "raw" class types (trivially copyable, no serialize of their own), which
// are written as their bytes so that e.g. std::map<std::string, Vec3> works without boilerplate.
// Also pulls in Boost's own support for the standard containers, so that one include covers them.
#pragma once

#include <boost/serialization/array.hpp>
#include <boost/serialization/binary_object.hpp>
#include <boost/serialization/deque.hpp>
#include <boost/serialization/is_bitwise_serializable.hpp>
#include <boost/serialization/list.hpp>
#include <boost/serialization/map.hpp>
#include <boost/serialization/nvp.hpp>
#include <boost/serialization/serialization.hpp>
#include <boost/serialization/set.hpp>
#include <boost/serialization/split_free.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/unordered_map.hpp>
#include <boost/serialization/unordered_set.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <complex>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "weft/errors.hpp"

namespace weft::serde {

template <class T>
struct is_raw;

namespace detail {

[[noreturn]] void throw_bad_variant_index(size_t index, size_t alternatives);

template <class T>
inline constexpr bool is_view_v = false;
template <class C, class Tr>
inline constexpr bool is_view_v<std::basic_string_view<C, Tr>> = true;
template <class T, size_t N>
inline constexpr bool is_view_v<std::span<T, N>> = true;

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

// Whether T declares a member named `serialize`, whatever its access (the usual pattern makes it
// private and befriends boost::serialization::access, which a requires-expression cannot see).
// Lookup of the name in a class deriving from T and from a probe is ambiguous exactly when T has
// one. Final classes cannot be derived from; for them only a public member is detected.
struct SerializeProbe {
  int serialize;
};
template <class T>
struct SerializeProbeDerived : T, SerializeProbe {};
template <class T>
concept has_public_serialize = requires {
  &T::serialize;
};
template <class T>
concept has_serialize_member = std::is_class_v<T> &&
    ((!std::is_final_v<T> && !requires { &SerializeProbeDerived<T>::serialize; }) ||
     (std::is_final_v<T> && has_public_serialize<T>));

// Class types that travel as their bytes inside Boost archives (scalars are Boost primitives).
template <class T>
concept raw_class =
    std::is_class_v<T> && is_raw<T>::value && !is_complex_v<T> && !std::is_empty_v<T>;
// Empty raw classes (std::monostate, tags) still write one byte, so that every element of a
// collection takes at least one byte and the length guard of IArchive stays exact.
template <class T>
concept empty_raw_class = std::is_class_v<T> && is_raw<T>::value && std::is_empty_v<T>;

}  // namespace detail
}  // namespace weft::serde

namespace boost::serialization {

template <class T>
requires weft::serde::detail::raw_class<T>
struct is_bitwise_serializable<T> : boost::true_type {
};

// More constrained than Boost's catch-all serialize (same signature), so it wins for raw classes;
// a user's own serialize for T is more specialised and still wins over this one.
template <class Archive, class T>
requires weft::serde::detail::raw_class<T>
inline void serialize(Archive& ar, T& t, const unsigned int) {
  ar& make_nvp("bytes", make_binary_object(&t, sizeof(T)));
}

template <class Archive, class T>
requires weft::serde::detail::empty_raw_class<T>
inline void serialize(Archive& ar, T&, const unsigned int) {
  unsigned char marker = 0;
  ar& make_nvp("empty", marker);
}

// std::tuple: its elements in order.
template <class Archive, class... Ts>
inline void serialize(Archive& ar, std::tuple<Ts...>& t, const unsigned int) {
  if constexpr (sizeof...(Ts) == 0) {
    unsigned char marker = 0;  // see empty_raw_class
    ar& make_nvp("empty", marker);
  } else {
    std::apply([&ar](auto&... e) { ((ar & make_nvp("e", e)), ...); }, t);
  }
}

// std::optional: a presence flag, then the value. Loading needs a default-constructible T, like
// Boost's own boost::optional support.
template <class Archive, class T>
inline void save(Archive& ar, const std::optional<T>& t, const unsigned int) {
  const bool engaged = t.has_value();
  ar << make_nvp("engaged", engaged);
  if (engaged) ar << make_nvp("value", *t);
}
template <class Archive, class T>
inline void load(Archive& ar, std::optional<T>& t, const unsigned int) {
  bool engaged = false;
  ar >> make_nvp("engaged", engaged);
  if (!engaged) {
    t.reset();
    return;
  }
  if (!t.has_value()) t.emplace();
  ar >> make_nvp("value", *t);
}
template <class Archive, class T>
inline void serialize(Archive& ar, std::optional<T>& t, const unsigned int version) {
  split_free(ar, t, version);
}

// std::variant: the alternative's index (u32), then the alternative. The alternative is built in
// place and loaded there, so its address is final (pointer tracking stays valid).
template <class Archive, class... Ts>
inline void save(Archive& ar, const std::variant<Ts...>& v, const unsigned int) {
  if (v.valueless_by_exception())
    throw weft::SerializationError("std::variant is valueless_by_exception");
  const uint32_t index = static_cast<uint32_t>(v.index());
  ar << make_nvp("index", index);
  std::visit([&ar](const auto& alt) { ar << make_nvp("value", alt); }, v);
}
template <class Archive, class... Ts>
inline void load(Archive& ar, std::variant<Ts...>& v, const unsigned int) {
  uint32_t index = 0;
  ar >> make_nvp("index", index);
  if (index >= sizeof...(Ts)) weft::serde::detail::throw_bad_variant_index(index, sizeof...(Ts));
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((index == I ? (ar >> make_nvp("value", v.template emplace<I>()), 0) : 0), ...);
  }
  (std::index_sequence_for<Ts...>{});
}
template <class Archive, class... Ts>
inline void serialize(Archive& ar, std::variant<Ts...>& v, const unsigned int version) {
  split_free(ar, v, version);
}

}  // namespace boost::serialization
