// Remote tasks: weft::task(f).options({...}).remote(args...) → ObjectRef<R>.
#pragma once

#include <optional>

#include "weft/detail/call_args.hpp"
#include "weft/detail/registry.hpp"

namespace weft {

template <class F>
class TaskCaller {
 public:
  using Traits = detail::FunctionTraits<F>;
  explicit TaskCaller(F f) : f_(f) {}
  // Converted here, once: a caller kept and called many times pays nothing per call for them.
  TaskCaller& options(const TaskOptions& o) {
    opts_ = detail::to_submit_options(o);
    return *this;
  }
  template <class... A>
  detail::ResultRef<typename Traits::Result> remote(A&&... args) const {
    uint64_t id = detail::function_id_of(f_);
    auto encoded = detail::encode_args<typename Traits::Args>(std::forward<A>(args)...);
    return detail::ResultRef<typename Traits::Result>(
        detail::submit_task(id, std::move(encoded),
                            opts_ ? *opts_ : detail::default_submit_options()));
  }

 private:
  F f_;
  // None: the defaults (detail::default_submit_options), which `weft::task(f).remote(...)` in a
  // loop then neither converts nor copies per call.
  std::optional<detail::SubmitOptions> opts_;
};

// `f` must have been registered with WEFT_REMOTE(f).
template <class R, class... A>
TaskCaller<R (*)(A...)> task(R (*f)(A...)) {
  return TaskCaller<R (*)(A...)>(f);
}

}  // namespace weft
