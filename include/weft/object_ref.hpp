// ObjectRef<T>: a future for an immutable value that lives with its owner (or, once large, in the
// node's object store). get / wait / put are the ways to read and create them.
#pragma once

#include <chrono>
#include <initializer_list>
#include <utility>
#include <vector>

#include <boost/serialization/split_member.hpp>

#include "weft/detail/refcount_api.hpp"
#include "weft/detail/runtime_api.hpp"
#include "weft/detail/store_api.hpp"
#include "weft/errors.hpp"
#include "weft/serialization.hpp"

namespace weft {

template <class T>
class ObjectRef {
 public:
  using value_type = T;

  ObjectRef() = default;
  explicit ObjectRef(detail::StatePtr s) : s_(std::move(s)) {}

  const ObjectId& id() const { return s_->id; }
  bool valid() const { return s_ != nullptr; }
  // True once the value (or its error) is on this rank; never blocks.
  bool ready() const { return s_ && s_->done(); }
  // Blocks until the value is there; throws the task's typed error instead, or GetTimeoutError.
  T get() const { return get(std::chrono::nanoseconds(-1)); }
  template <class Rep, class Period>
  T get(std::chrono::duration<Rep, Period> timeout) const;

  const detail::StatePtr& state() const { return s_; }
  friend bool operator==(const ObjectRef& a, const ObjectRef& b) { return a.s_ == b.s_; }

  // Refs inside arguments and results travel as ids; the receiving rank borrows them (the
  // message's carrier registers it with the owner first: detail/refcount_api.hpp).
  // With the job's tag: bytes saved by another job (a file, a checkpoint of an earlier run) name
  // that job's objects, and loading them here is a SerializationError, never another object.
  template <class Archive>
  void save(Archive& ar, unsigned) const {
    detail::note_serialized(s_);
    ObjectId id = s_ ? s_->id : ObjectId{};
    const uint64_t tag = detail::job_tag();
    ar << id.owner << id.kind << id.seq << tag;
  }
  template <class Archive>
  void load(Archive& ar, unsigned) {
    ObjectId id;
    uint64_t tag = 0;
    ar >> id.owner >> id.kind >> id.seq >> tag;
    if (id.valid() && tag != detail::job_tag()) detail::throw_foreign_ref(id.str(), tag);
    s_ = id.valid() ? detail::state_for(id) : nullptr;
  }
  BOOST_SERIALIZATION_SPLIT_MEMBER()

 private:
  detail::StatePtr s_;
};

template <class T>
struct is_object_ref : std::false_type {};
template <class T>
struct is_object_ref<ObjectRef<T>> : std::true_type {};

namespace detail {

inline void check_ref(const StatePtr& s) {
  if (!s) throw Error("weft::get on an empty ObjectRef (default-constructed or moved-from)");
}

template <class T>
T value_of(const ObjectState& s) {
  if (s.status() == ObjectStatus::kFailed) throw_error(s);
  if constexpr (std::is_void_v<T>) {
    return;
  } else {
    auto p = read_payload(s);  // pins a store-backed value only while it is decoded
    return decode_value<T>(p->data(), p->size());
  }
}

[[noreturn]] void throw_get_timeout(const ObjectId& id, std::chrono::nanoseconds timeout);

}  // namespace detail

template <class T>
template <class Rep, class Period>
T ObjectRef<T>::get(std::chrono::duration<Rep, Period> timeout) const {
  detail::check_ref(s_);
  auto t = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout);
  if (!s_->done() && !detail::wait_done(s_, t)) detail::throw_get_timeout(s_->id, t);
  return detail::value_of<T>(*s_);
}

// The value behind `ref`, blocking until it exists.
template <class T>
T get(const ObjectRef<T>& ref) {
  return ref.get();
}
template <class T, class Rep, class Period>
T get(const ObjectRef<T>& ref, std::chrono::duration<Rep, Period> timeout) {
  return ref.get(timeout);
}

// All values, in order. With a timeout, GetTimeoutError if any is still missing at the deadline.
template <class T>
std::vector<T> get(const std::vector<ObjectRef<T>>& refs,
                   std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) {
  std::vector<detail::StatePtr> states;
  states.reserve(refs.size());
  for (const auto& r : refs) {
    detail::check_ref(r.state());
    states.push_back(r.state());
  }
  auto done = detail::wait_some(states, states.size(), timeout);
  for (size_t i = 0; i < done.size(); ++i)
    if (!done[i]) detail::throw_get_timeout(states[i]->id, timeout);
  std::vector<T> out;
  out.reserve(refs.size());
  for (const auto& s : states) out.push_back(detail::value_of<T>(*s));
  return out;
}

// Splits `refs` into (ready, not ready) once `num_returns` are ready or `timeout` passed. Ready
// refs keep their order; ready includes refs whose task failed (get then throws).
template <class T>
std::pair<std::vector<ObjectRef<T>>, std::vector<ObjectRef<T>>> wait(
    const std::vector<ObjectRef<T>>& refs, size_t num_returns = 1,
    std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) {
  if (num_returns > refs.size())
    throw Error("weft::wait: num_returns (" + std::to_string(num_returns) +
                ") is larger than the number of refs (" + std::to_string(refs.size()) + ")");
  std::vector<detail::StatePtr> states;
  states.reserve(refs.size());
  for (const auto& r : refs) {
    detail::check_ref(r.state());
    states.push_back(r.state());
  }
  auto done = detail::wait_some(states, num_returns, timeout);
  std::pair<std::vector<ObjectRef<T>>, std::vector<ObjectRef<T>>> out;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (done[i] && out.first.size() < num_returns)
      out.first.push_back(refs[i]);
    else
      out.second.push_back(refs[i]);
  }
  return out;
}
template <class T, class Rep = int64_t, class Period = std::nano>
std::pair<std::vector<ObjectRef<T>>, std::vector<ObjectRef<T>>> wait(
    std::initializer_list<ObjectRef<T>> refs, size_t num_returns = 1,
    std::chrono::duration<Rep, Period> timeout = std::chrono::nanoseconds(-1)) {
  return wait(std::vector<ObjectRef<T>>(refs), num_returns,
              std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
}

// Stores `value` as an object owned by this rank. Values above inline_threshold (100 KiB) go to
// the node's object store; raw values and vectors/strings of raw elements are encoded straight
// into shared memory (one copy).
template <class T>
ObjectRef<std::decay_t<T>> put(T&& value) {
  static_assert(!is_object_ref<std::decay_t<T>>::value, "weft::put of an ObjectRef");
  return ObjectRef<std::decay_t<T>>(detail::put_value(value));
}

}  // namespace weft
