// Whether weft::serde can serialize a type, decided before any Boost code is instantiated, so that
// a type with no serialization gets one clear compile-time error naming it (serialization.hpp)
// instead of a page of Boost template errors.
//
// A type is serializable when it is raw (copied as its bytes), a hand-path type, a standard
// container or wrapper of serializable types, or when it has a serialize (member or free, in any
// of the places Boost looks). Each of those is seen from here, Boost's usual private idiom too:
//  * a member named serialize, whatever its access (has_serialize_member: name-lookup ambiguity);
//  * a free serialize(Archive&, T&, unsigned) in T's namespace or in boost::serialization (what
//    BOOST_SERIALIZATION_SPLIT_FREE writes): Boost calls it with a boost::serialization::
//    version_type, so argument-dependent lookup finds it in either namespace at instantiation.
//    has_free_serialize asks the same question with a probe archive: a probe overload that beats
//    Boost's catch-all but ties with any serialize written for T. The call returns the probe's
//    type exactly when nothing was written for T; an ambiguity or another result means there was.
// What cannot be seen is let through: a final class (no derived probe) and types that only a
// Boost trait makes primitive.
#pragma once

#include <array>
#include <boost/serialization/serialization.hpp>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "weft/detail/serde_codec.hpp"
#include "weft/detail/serde_std.hpp"

namespace weft::serde::detail {

// Only ever named in unevaluated overload resolution.
struct ProbeArchive {};
struct NoSerializeWritten {};
template <class T>
NoSerializeWritten serialize(ProbeArchive&, T&, const unsigned int);

template <class T>
concept has_free_serialize =
    !requires(ProbeArchive & ar, T& t, boost::serialization::version_type v) {
  { serialize(ar, t, v) } -> std::same_as<NoSerializeWritten>;
};

// The element types of the standard containers and wrappers that Weft serializes (hand path, or
// Boost with the headers serde_std.hpp includes); for any other type, none.
template <class T>
struct parts {
  static constexpr bool container = false;
  using types = std::tuple<>;
};
template <class... Es>
struct parts_of {
  static constexpr bool container = true;
  using types = std::tuple<Es...>;
};
template <class E, size_t N>
struct parts<E[N]> : parts_of<E> {};
template <class E, size_t N>
struct parts<std::array<E, N>> : parts_of<E> {};
template <class E, class A>
struct parts<std::vector<E, A>> : parts_of<E> {};
template <class E, class A>
struct parts<std::deque<E, A>> : parts_of<E> {};
template <class E, class A>
struct parts<std::list<E, A>> : parts_of<E> {};
template <class K, class V, class C, class A>
struct parts<std::map<K, V, C, A>> : parts_of<K, V> {};
template <class K, class V, class C, class A>
struct parts<std::multimap<K, V, C, A>> : parts_of<K, V> {};
template <class K, class V, class H, class Q, class A>
struct parts<std::unordered_map<K, V, H, Q, A>> : parts_of<K, V> {};
template <class K, class V, class H, class Q, class A>
struct parts<std::unordered_multimap<K, V, H, Q, A>> : parts_of<K, V> {};
template <class K, class C, class A>
struct parts<std::set<K, C, A>> : parts_of<K> {};
template <class K, class C, class A>
struct parts<std::multiset<K, C, A>> : parts_of<K> {};
template <class K, class H, class Q, class A>
struct parts<std::unordered_set<K, H, Q, A>> : parts_of<K> {};
template <class K, class H, class Q, class A>
struct parts<std::unordered_multiset<K, H, Q, A>> : parts_of<K> {};
template <class A, class B>
struct parts<std::pair<A, B>> : parts_of<A, B> {};
template <class... Ts>
struct parts<std::tuple<Ts...>> : parts_of<Ts...> {};
template <class E>
struct parts<std::optional<E>> : parts_of<E> {};
template <class... Ts>
struct parts<std::variant<Ts...>> : parts_of<Ts...> {};

// A type that is not a container: serializable by itself.
template <class T>
concept serializable_leaf = is_raw<T>::value || hand_v<T> || has_serialize_member<T> ||
    has_free_serialize<T> ||(std::is_class_v<T>&& std::is_final_v<T>);

// The first type inside T, depth first, that cannot be serialized, or void when there is none.
template <class T>
struct first_unserializable;
template <class Tuple>
struct first_unserializable_of;
template <>
struct first_unserializable_of<std::tuple<>> {
  using type = void;
};
template <class E, class... Rest>
struct first_unserializable_of<std::tuple<E, Rest...>> {
  using inner = typename first_unserializable<std::remove_cv_t<E>>::type;
  using type =
      std::conditional_t<std::is_void_v<inner>,
                         typename first_unserializable_of<std::tuple<Rest...>>::type, inner>;
};
template <class T>
struct first_unserializable {
  using type = typename std::conditional_t<
      parts<T>::container, first_unserializable_of<typename parts<T>::types>,
      std::type_identity<std::conditional_t<serializable_leaf<T>, void, T>>>::type;
};

template <class T>
using first_unserializable_t = typename first_unserializable<std::remove_cv_t<T>>::type;

// Instantiated for the offending type only, so that the compiler's note names it:
// "In instantiation of 'struct weft::serde::detail::NotSerializable<Opaque>'". Callers write
// `(void)sizeof(NotSerializable<first_unserializable_t<T>>)` in the branch of an `if constexpr`
// on serializable_v<T> that holds no Boost code, so nothing else fails after it (through a
// function template instead, clang would report each later use of it as a second error).
template <class T>
struct NotSerializable {
  static_assert(
      !std::is_same_v<T, T>,
      "weft: a task argument, result or stored value has a type that cannot be serialized: the "
      "type is the T of NotSerializable<T> in the note above. Make it serializable in one of "
      "three ways: (1) make it trivially copyable with no pointers, and it is copied as its "
      "bytes; (2) give it a member `template <class Archive> void serialize(Archive& ar, "
      "unsigned) { ar & field1 & field2; }` (private is fine with `friend class "
      "boost::serialization::access;`); (3) write a free `template <class Archive> void "
      "serialize(Archive&, T&, unsigned)` (or save/load with BOOST_SERIALIZATION_SPLIT_FREE) in "
      "T's namespace or in namespace boost::serialization. A standard container needs Boost's "
      "header for it, e.g. <boost/serialization/forward_list.hpp>.");
};

template <class T>
inline constexpr bool serializable_v = std::is_void_v<first_unserializable_t<T>>;

}  // namespace weft::serde::detail
