// Encoding of call arguments against the callee's parameter types. An ObjectRef<P> passed where
// the callee takes P is resolved before the call runs; one passed where it takes ObjectRef<P>
// stays a ref (borrowed by the callee).
#pragma once

#include <cstring>
#include <tuple>
#include <type_traits>

#include "weft/detail/refcount_api.hpp"
#include "weft/detail/runtime_api.hpp"
#include "weft/object_ref.hpp"
#include "weft/options.hpp"

namespace weft::detail {

template <class P, class A>
void encode_arg(EncodedArgs& out, A&& a) {
  using D = std::decay_t<A>;
  if constexpr (is_object_ref<D>::value && !is_object_ref<P>::value) {
    static_assert(std::is_same_v<typename D::value_type, P>,
                  "an ObjectRef<T> argument must match the parameter type T exactly");
    check_ref(a.state());
    char tag = 1;
    out.bytes.append(&tag, 1);
    out.refs.push_back(a.state());
  } else {
    static_assert(std::is_convertible_v<A&&, P>,
                  "argument is not convertible to the remote function's parameter type");
    char tag = 0;
    out.bytes.append(&tag, 1);
    size_t at = out.bytes.size();
    out.bytes.grow(sizeof(uint64_t));
    if constexpr (std::is_same_v<D, P>) {
      serde::encode(out.bytes, a);
    } else {
      serde::encode(out.bytes, static_cast<P>(std::forward<A>(a)));
    }
    uint64_t n = out.bytes.size() - at - sizeof(uint64_t);
    std::memcpy(out.bytes.data() + at, &n, sizeof n);
  }
}

template <class Params, class... A, size_t... I>
EncodedArgs encode_args_impl(std::index_sequence<I...>, A&&... a) {
  EncodedArgs out;
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
  s.resources = o.resources;
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
  s.resources = o.resources;
  s.name = o.name;
  s.max_restarts = o.max_restarts;
  s.max_task_retries = o.max_task_retries;
  s.max_concurrency = o.max_concurrency;
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
