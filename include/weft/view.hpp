// Zero-copy reads of large objects: weft::get_view(ref) returns a read-only View of the elements
// of an ObjectRef<std::vector<T>> (T trivially copyable, alignof(T) <= 8) or of a
// std::basic_string, without decoding or copying them.
//
//   weft::ObjectRef<std::vector<double>> r = weft::put(std::vector<double>(1 << 24, 1.0));
//   weft::View<double> v = weft::get_view(r);        // no copy: v.data() points into the store
//   double s = std::accumulate(v.begin(), v.end(), 0.0);
//
// Where the bytes are:
//  * the value lies in this node's object store (above inline_threshold, 100 KiB): the view
//    points into the node's shared-memory segment, and its cost does not grow with the size. On
//    another node the value is first pulled once into this node's store (a secondary copy);
//    ranks of the same node never copy.
//  * small values live inline with the ref; the view points at those bytes.
// The View keeps the object pinned (never evicted or spilled) while it lives, and costs one lock
// round trip of the store to open. It must not outlive the runtime. Writing through it is
// impossible by type: it hands out only const T* and std::span<const T>.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/detail/store_api.hpp"
#include "weft/errors.hpp"
#include "weft/object_ref.hpp"

namespace weft {

template <class T>
class View {
  static_assert(std::is_trivially_copyable_v<T>, "View<T> needs a trivially copyable T");
  static_assert(alignof(T) <= 8, "View<T>: elements start 8 bytes into the object");

 public:
  using value_type = T;
  View() = default;

  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T& operator[](size_t i) const { return data_[i]; }
  std::span<const T> span() const { return {data_, size_}; }
  operator std::span<const T>() const { return span(); }
  // The object's encoded bytes (count + elements) as they lie in memory.
  std::span<const std::byte> bytes() const {
    return {reinterpret_cast<const std::byte*>(pin_->data()), pin_->size()};
  }

 private:
  template <class E>
  friend View<E> detail_make_view(std::shared_ptr<const detail::Payload> pin, const ObjectId* id);
  std::shared_ptr<const detail::Payload> pin_;
  const T* data_ = nullptr;
  size_t size_ = 0;
};

// `id`: the object, named in the error; null for a call's argument (the caller names it).
template <class E>
View<E> detail_make_view(std::shared_ptr<const detail::Payload> pin, const ObjectId* id) {
  uint64_t n = 0;
  const size_t bytes = pin->size();
  if (bytes >= sizeof n) std::memcpy(&n, pin->data(), sizeof n);
  if (bytes < sizeof n || (bytes - sizeof n) / sizeof(E) != n || (bytes - sizeof n) % sizeof(E))
    throw SerializationError((id ? "get_view: " + id->str() : std::string("the value")) +
                             " does not hold a sequence of " + std::to_string(sizeof(E)) +
                             "-byte elements (" + std::to_string(bytes) + " bytes)");
  View<E> v;
  v.data_ = reinterpret_cast<const E*>(pin->data() + sizeof n);
  v.size_ = static_cast<size_t>(n);
  v.pin_ = std::move(pin);
  return v;
}

namespace detail {
// A remote function's parameter that views its argument in place: View<E> or
// std::span<const E> (call_args.hpp, registry.hpp).
template <class P>
struct view_param : std::false_type {};
template <class E>
struct view_param<View<E>> : std::true_type {
  using element = E;
};
template <class E>
struct view_param<std::span<const E>> : std::true_type {
  using element = E;
};
}  // namespace detail

namespace detail {
template <class E>
View<E> view_of(const StatePtr& s, std::chrono::nanoseconds timeout) {
  check_ref(s);
  if (!s->done() && !wait_done(s, timeout)) throw_get_timeout(s->id, timeout);
  if (s->status() == ObjectStatus::kFailed) throw_error(*s);
  return detail_make_view<E>(read_payload(*s), &s->id);
}
}  // namespace detail

// A read-only, zero-copy view of the elements behind `ref`, blocking until the value exists
// (typed errors as get(): TaskError, GetTimeoutError, ...).
template <class T, class A>
View<T> get_view(const ObjectRef<std::vector<T, A>>& ref,
                 std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) {
  static_assert(!std::is_same_v<T, bool>, "std::vector<bool> has no contiguous bytes to view");
  return detail::view_of<T>(ref.state(), timeout);
}
template <class C, class Tr, class A>
View<C> get_view(const ObjectRef<std::basic_string<C, Tr, A>>& ref,
                 std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) {
  return detail::view_of<C>(ref.state(), timeout);
}

}  // namespace weft
