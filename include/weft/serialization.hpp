// Serialization of everything that crosses ranks: task arguments and results, actor state.
//
//   weft::serde::Buffer out;
//   weft::serde::encode(out, std::map<std::string, int>{{"a", 1}});
//   weft::serde::Reader in(out.data(), out.size());
//   auto m = weft::serde::decode<std::map<std::string, int>>(in);
//
// Three paths, chosen by the static type:
//  * raw: types with is_raw<T> (trivially copyable, no pointers, no serialize member) are copied
//    as their sizeof(T) bytes; std::vector / std::basic_string of raw elements, std::span and
//    std::basic_string_view of raw elements are a u64 element count and one memcpy. A span or
//    string_view is encoded like the vector or string it views and decodes as one.
//  * hand-written (detail/serde_codec.hpp): types built only from raw values and std::vector,
//    array, map, multimap, unordered_map, set, multiset, unordered_set, pair, tuple, optional,
//    variant, string -- nested in any combination -- without a Boost archive (whose set-up alone
//    costs ~1 us).
//  * Boost: everything else -- any type that is or contains a user type with a serialize --
//    goes as a whole through a Boost.Serialization binary archive writing straight into the
//    Buffer. User types provide `template <class Archive> void serialize(Archive&, unsigned)` as
//    a member, or a free `serialize(Archive&, T&, unsigned)` found by Boost's rules; inside the
//    archive the standard types above are supported too (detail/serde_std.hpp), and raw class
//    types travel as their bytes.
//
// The bytes are for the same build on every rank: no header, native byte order. A value must be
// decoded as the type it was encoded as. Any decoding failure (truncated or corrupt input, a
// bogus length, an exception from a user's serialize) raises weft::SerializationError naming the
// type being decoded; lengths are checked against the bytes left before anything is allocated.
// Decoding a non-raw T by value (decode<T>(in), from_bytes<T>) needs a default-constructible T.
// A type that none of the three paths can take is one compile-time error that names it and the
// ways to make it serializable (detail/serde_check.hpp), ahead of any Boost template error.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "weft/detail/serde_archive.hpp"
#include "weft/detail/serde_buffer.hpp"
#include "weft/detail/serde_check.hpp"
#include "weft/detail/serde_codec.hpp"
#include "weft/detail/serde_std.hpp"
#include "weft/errors.hpp"

namespace weft::serde {

// Whether T is copied as its bytes. Specialise it to std::false_type for a trivially copyable
// type that must not be (one holding a pointer, or whose free serialize must run); a type with a
// serialize member is never raw.
template <class T>
struct is_raw : std::bool_constant<std::is_trivially_copyable_v<T> &&
                                   !std::is_pointer_v<std::remove_all_extents_t<T>> &&
                                   !std::is_member_pointer_v<std::remove_all_extents_t<T>> &&
                                   !detail::is_view_v<T> && !detail::has_serialize_member<T>> {};
template <class T>
inline constexpr bool is_raw_v = is_raw<T>::value;

namespace detail {

// Demangled name of a type, for error messages.
std::string type_name(const std::type_info& type);
// Called from inside a catch block: rethrows the exception in flight as a SerializationError that
// says what was being decoded (or encoded) and why.
[[noreturn]] void rethrow_decode_error(const std::type_info& type, size_t position);
[[noreturn]] void rethrow_encode_error(const std::type_info& type);
[[noreturn]] void throw_trailing_bytes(const std::type_info& type, size_t trailing, size_t size);

}  // namespace detail

// Appends one value to out.
template <class T>
void encode(Buffer& out, const T& value) {
  static_assert(!std::is_void_v<T>, "void is not serialized");
  if constexpr (detail::hand_v<T>) {
    detail::encode_one(out, value);
  } else if constexpr (!detail::serializable_v<T>) {
    // One error naming the type (detail/serde_check.hpp), and no Boost errors after it.
    (void)sizeof(detail::NotSerializable<detail::first_unserializable_t<T>>);
  } else {
    static_assert(!std::is_pointer_v<T>, "weft::serde does not encode raw pointers");
    const size_t mark = out.size();
    try {
      detail::OutBuf sb(out);
      detail::OArchive ar(sb);
      ar << value;
    } catch (...) {
      out.truncate(mark);  // as it was, so that a caller can report the error and go on
      detail::rethrow_encode_error(typeid(T));
    }
  }
}

// Reads one value into out. On failure, throws SerializationError; out and the reader's position
// are then unspecified.
template <class T>
void decode(Reader& in, T& out) {
  static_assert(!std::is_void_v<T>, "void is not serialized");
  const size_t start = in.position();
  try {
    if constexpr (detail::hand_v<T>) {
      detail::decode_one(in, out);
    } else if constexpr (!detail::serializable_v<T>) {
      (void)sizeof(detail::NotSerializable<detail::first_unserializable_t<T>>);
    } else {
      detail::InBuf sb(in);
      {
        detail::IArchive ar(sb);
        ar >> out;
      }
      sb.commit();
    }
  } catch (...) {
    detail::rethrow_decode_error(typeid(T), start);
  }
}

// Reads one value. Raw types need no default constructor; other types do (Boost loads into an
// existing object).
template <class T>
T decode(Reader& in) {
  if constexpr (is_raw_v<T> && !std::is_default_constructible_v<T>) {
    const size_t start = in.position();
    try {
      return detail::decode_raw<T>(in);
    } catch (...) {
      detail::rethrow_decode_error(typeid(T), start);
    }
  } else {
    static_assert(std::is_default_constructible_v<T>,
                  "weft::serde::decode<T>(Reader&) needs a default-constructible T");
    T value{};
    decode(in, value);
    return value;
  }
}

// The bytes of one value.
template <class T>
std::vector<char> to_bytes(const T& value) {
  Buffer out;
  if constexpr (is_raw_v<T>) out.reserve(sizeof(T));
  encode(out, value);
  return out.take();
}

// Decodes one value from exactly [data, data + size): trailing bytes are an error (they mean the
// bytes hold another type).
template <class T>
T from_bytes(const char* data, size_t size) {
  Reader in(data, size);
  T value = decode<T>(in);
  if (!in.done()) detail::throw_trailing_bytes(typeid(T), in.remaining(), size);
  return value;
}
template <class T>
T from_bytes(const std::vector<char>& bytes) {
  return from_bytes<T>(bytes.data(), bytes.size());
}

}  // namespace weft::serde
