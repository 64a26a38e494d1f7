// Encoding of call arguments against the callee's parameter types (the block's format:
// arg_block.hpp). An ObjectRef<P> passed where the callee takes P is resolved before the call
// runs; one passed where it takes ObjectRef<P> stays a ref (borrowed by the callee). A parameter
// of type weft::View<E> or std::span<const E> takes an ObjectRef<std::vector<E>> (or of a
// std::basic_string<E>) and receives a read-only view of the value where it lies, pinned for the
// call: no copy when the value is in the task's node store.
#pragma once

#include <cstring>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "weft/detail/arg_block.hpp"
#include "weft/detail/refcount_api.hpp"
#include "weft/detail/runtime_api.hpp"
#include "weft/object_ref.hpp"
#include "weft/options.hpp"
#include "weft/view.hpp"

namespace weft::detail {

// The values a view parameter of element E accepts, by ref or by value.
template <class V, class E>
struct viewable : std::false_type {};
template <class E, class A>
struct viewable<std::vector<E, A>, E> : std::true_type {};
template <class E, class Tr, class A>
struct viewable<std::basic_string<E, Tr, A>, E> : std::true_type {};

// 1.5 passed to an int parameter would silently become 1: a floating-point argument for an
// integral (or bool) parameter is refused at compile time.
template <class P, class D>
inline constexpr bool narrows_to_integral =
    std::is_floating_point_v<D> && (std::is_integral_v<P> || std::is_same_v<P, bool>);

template <class P, class A>
void encode_arg(EncodedArgs& out, A&& a) {
  using D = std::decay_t<A>;
  ArgWriter w(out.bytes);
  if constexpr (is_object_ref<D>::value && !is_object_ref<P>::value) {
    if constexpr (view_param<P>::value) {
      static_assert(viewable<typename D::value_type, typename view_param<P>::element>::value,
                    "a View<E> / std::span<const E> parameter takes an ObjectRef of a "
                    "std::vector<E> or a std::basic_string<E>");
    } else {
      static_assert(std::is_same_v<typename D::value_type, P>,
                    "an ObjectRef<T> argument must match the parameter type T exactly");
    }
    check_ref(a.state());
    w.ref();
    out.refs.push_back(a.state());
  } else if constexpr (view_param<P>::value) {
    // A value passed straight to a view parameter travels as the sequence it views.
    using E = typename view_param<P>::element;
    static_assert(std::is_convertible_v<const D&, std::span<const E>>,
                  "a View<E> / std::span<const E> parameter takes a contiguous sequence of E "
                  "(std::vector<E>, std::basic_string<E>, std::span) or an ObjectRef of one");
    std::span<const E> v = a;
    const uint64_t count = v.size();
    const size_t at = w.begin_inline();
    out.bytes.append(&count, sizeof count);
    out.bytes.append(v.data(), v.size_bytes());
    w.end_inline(at);
  } else {
    static_assert(std::is_convertible_v<A&&, P>,
                  "argument is not convertible to the remote function's parameter type");
    static_assert(!narrows_to_integral<P, D>,
                  "a floating-point argument for an integral parameter would be truncated: "
                  "convert it explicitly (static_cast) or change the parameter type");
    const size_t at = w.begin_inline();
    if constexpr (std::is_same_v<D, P>) {
      serde::encode(out.bytes, a);
    } else {
      serde::encode(out.bytes, static_cast<P>(std::forward<A>(a)));
    }
    w.end_inline(at);
  }
}

// The bytes an argument's entry usually takes: a tag, a length and the value (a guess for values
// that are not trivially copyable). The block is reserved once at their sum: grown from empty,
// one int argument reallocated it three times.
template <class P>
inline constexpr size_t entry_bytes_hint = 1 + sizeof(uint64_t) +
                                           (std::is_trivially_copyable_v<P> ? sizeof(P) : 32);

template <class Params, class... A, size_t... I>
EncodedArgs encode_args_impl(std::index_sequence<I...>, A&&... a) {
  EncodedArgs out;
  if constexpr (sizeof...(I) > 0)
    out.bytes.reserve((0 + ... + entry_bytes_hint<std::tuple_element_t<I, Params>>));
  RefCollector collect(&out.contained);  // refs nested in values are borrowed by the callee
  (encode_arg<std::tuple_element_t<I, Params>>(out, std::forward<A>(a)), ...);
  return out;
}

template <class Params, class... A>
EncodedArgs encode_args(A&&... a) {
  static_assert(std::tuple_size_v<Params> == sizeof...(A),
                "wrong number of arguments for the remote function");
  return encode_args_impl<Params>(std::index_sequence_for<A...>{}, std::forward<A>(a)...);
}

inline void set_strategy(SubmitOptions& s, const SchedulingStrategy& st) {
  s.strategy = static_cast<uint8_t>(st.index());
  if (const auto* a = std::get_if<NodeAffinity>(&st)) {
    s.affinity_node = a->node;
    s.affinity_soft = a->soft;
  }
}

inline SubmitOptions to_submit_options(const TaskOptions& o) {
  SubmitOptions s;
  s.num_cpus = o.num_cpus;
  s.num_gpus = o.num_gpus;
  s.memory = o.memory;
  s.resources.assign(o.resources.begin(), o.resources.end());
  s.max_retries = o.max_retries;
  s.retry_exceptions = o.retry_exceptions;
  s.name = o.name;
  s.placement_group = o.placement_group.id();
  s.bundle_index = o.bundle_index;
  s.capture_child_tasks = o.capture_child_tasks;
  set_strategy(s, o.scheduling_strategy);
  return s;
}

inline SubmitOptions to_submit_options(const ActorOptions& o) {
  SubmitOptions s;
  s.num_cpus = o.num_cpus;
  s.num_gpus = o.num_gpus;
  s.memory = o.memory;
  s.resources.assign(o.resources.begin(), o.resources.end());
  s.name = o.name;
  s.max_restarts = o.max_restarts;
  s.max_task_retries = o.max_task_retries;
  s.max_concurrency = o.max_concurrency;
  s.checkpoint_every = o.checkpoint_every;
  s.checkpoint_interval_ms = o.checkpoint_interval.count();
  s.placement_group = o.placement_group.id();
  s.bundle_index = o.bundle_index;
  s.capture_child_tasks = o.capture_child_tasks;
  set_strategy(s, o.scheduling_strategy);
  return s;
}

// ObjectRef<R> for a callee returning R (ObjectRef<void> for void).
template <class R>
using ResultRef = ObjectRef<std::decay_t<R>>;

}  // namespace weft::detail
