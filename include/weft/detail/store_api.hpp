// The narrow interface between the public templates and the node object store (src/core,
// object_put.cpp): reading a value without copying it, and put() writing straight into shared
// memory when the encoded size is known in advance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/detail/object_state.hpp"
#include "weft/detail/refcount_api.hpp"
#include "weft/detail/runtime_api.hpp"
#include "weft/serialization.hpp"

namespace weft::detail {

// The bytes of a ready object, readable while the returned pointer lives. A value in the node
// store is pinned only for as long as the caller holds the pointer (restored from its spill
// file first if needed), so objects nobody is reading can still be spilled.
std::shared_ptr<const Payload> read_payload(const ObjectState& s);

// put() of a value whose encoded size is known: `fill(dst, ctx)` writes exactly `size` bytes.
// Values above inline_threshold are written straight into this node's store (one copy).
StatePtr put_sized(size_t size, void (*fill)(char*, const void*), const void* ctx);

// A task's or actor method's result of `size` encoded bytes, which `fill(dst, ctx)` writes: above
// inline_threshold it goes straight into this node's store under the call's return id (one copy;
// otherwise it is encoded into a heap buffer, zero-filled first, and copied from there). Returns
// false when the result takes that usual path: not a call's body on this thread (or an actor
// that checkpoints), no store, or not above the threshold. A failure to store it becomes the
// call's error.
bool put_result_direct(size_t size, void (*fill)(char*, const void*), const void* ctx);

// What this rank's node store holds (tests, benchmarks, `weft status`).
struct StoreInfo {
  uintptr_t segment_base = 0;  // this process's mapping of the node segment
  size_t segment_size = 0;
  size_t capacity = 0, used = 0, primary_bytes = 0, secondary_bytes = 0;
  size_t spilled_bytes = 0, fallback_bytes = 0, num_objects = 0;
  uint64_t spills = 0, restores = 0, evictions = 0;
  size_t inline_threshold = 0;
  // This rank's inline values (src/core/inline_budget.hpp): the limit, the bytes charged now and
  // at most so far, and how many small values went to the store because the limit was reached.
  size_t inline_limit = 0, inline_bytes = 0, inline_peak = 0;
  uint64_t inline_moved = 0;
};
StoreInfo local_store_info();

// Types whose encoding is their bytes (raw) or a u64 count and one block of raw elements
// (std::vector and std::basic_string of raw elements): the same bytes serde::encode writes.
template <class T>
struct direct_encoding : std::false_type {};

template <class T>
requires serde::is_raw_v<T>
struct direct_encoding<T> : std::true_type {
  static size_t size(const T&) { return sizeof(T); }
  static void fill(char* dst, const void* v) { std::memcpy(dst, v, sizeof(T)); }
};

template <class Seq, class E>
struct direct_sequence : std::true_type {
  static size_t size(const Seq& s) { return sizeof(uint64_t) + s.size() * sizeof(E); }
  static void fill(char* dst, const void* v) {
    const auto& s = *static_cast<const Seq*>(v);
    const uint64_t n = s.size();
    std::memcpy(dst, &n, sizeof n);
    if (n) std::memcpy(dst + sizeof n, s.data(), n * sizeof(E));
  }
};

template <class E, class A>
requires(serde::is_raw_v<E> && !std::is_same_v<E, bool>) struct direct_encoding<std::vector<E, A>>
    : direct_sequence<std::vector<E, A>, E> {
};

template <class C, class Tr, class A>
requires serde::is_raw_v<C>
struct direct_encoding<std::basic_string<C, Tr, A>>
    : direct_sequence<std::basic_string<C, Tr, A>, C> {
};

// get(): a vector or string of raw elements is built in one pass from the bytes (no
// zero-filling first, which on large values costs as much as the copy); other types decode.
template <class T>
T decode_value(const char* data, size_t size) {
  if constexpr (direct_encoding<T>::value && !serde::is_raw_v<T>) {
    using E = typename T::value_type;
    uint64_t n = 0;
    if (size < sizeof n || (std::memcpy(&n, data, sizeof n), (size - sizeof n) / sizeof(E) != n) ||
        (size - sizeof n) % sizeof(E) != 0) {
      throw SerializationError("cannot decode a sequence of " + std::to_string(sizeof(E)) +
                               "-byte elements from " + std::to_string(size) +
                               " bytes: the value holds another type");
    }
    if constexpr (alignof(E) > 8) {  // elements may be misaligned in the bytes: decode
      return serde::from_bytes<T>(data, size);
    } else {
      T value;
      serde::detail::assign_elements(value, reinterpret_cast<const E*>(data + sizeof n), n);
      return value;
    }
  } else {
    return serde::from_bytes<T>(data, size);
  }
}

// put(): encode straight into the destination when the size is known, else through a buffer.
template <class T>
StatePtr put_value(const T& value) {
  if constexpr (direct_encoding<T>::value) {
    return put_sized(direct_encoding<T>::size(value), &direct_encoding<T>::fill, &value);
  } else {
    std::vector<StatePtr> contained;  // refs nested in the value (docs: reference counting)
    std::vector<char> bytes;
    {
      RefCollector collect(&contained);
      bytes = serde::to_bytes(value);
    }
    return put_bytes(std::move(bytes), std::move(contained));
  }
}

}  // namespace weft::detail
