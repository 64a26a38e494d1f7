// MoveOnlyFunction<R(Args...)>: any callable, move-only captures included, in one allocation
// (from a HandoffPool).
// std::function needs a copyable callable, so a job that owns its work item (a unique_ptr) could
// not travel in one; std::move_only_function is C++23. A function that is destroyed without
// being called destroys what it captured, so nothing it owns leaks.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include "common/handoff_pool.hpp"

namespace weft {

template <class Signature>
class MoveOnlyFunction;

template <class R, class... Args>
class MoveOnlyFunction<R(Args...)> {
 public:
  MoveOnlyFunction() = default;
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, MoveOnlyFunction> &&
                                              std::is_invocable_r_v<R, std::decay_t<F>&, Args...>>>
  MoveOnlyFunction(
      F&& f)  // NOLINT(google-explicit-constructor): lambdas convert, as to std::function
      : impl_(std::make_unique<Impl<std::decay_t<F>>>(std::forward<F>(f))) {}

  R operator()(Args... args) { return impl_->run(std::forward<Args>(args)...); }
  explicit operator bool() const { return impl_ != nullptr; }

  // The callable as one raw pointer and back, for queues whose slots must be trivially copyable
  // (boost::lockfree). release() gives ownership up; adopt() takes a released one back, once.
  void* release() { return impl_.release(); }
  static MoveOnlyFunction adopt(void* raw) {
    MoveOnlyFunction f;
    f.impl_.reset(static_cast<Base*>(raw));
    return f;
  }

 private:
  // Commands and jobs are made on one thread and run and freed on another (handoff_pool.hpp).
  struct Base : HandoffAllocated {
    virtual ~Base() = default;
    virtual R run(Args... args) = 0;
  };
  template <class F>
  struct Impl final : Base {
    explicit Impl(F&& fn) : f(std::move(fn)) {}
    explicit Impl(const F& fn) : f(fn) {}
    R run(Args... args) override { return f(std::forward<Args>(args)...); }
    F f;
  };
  std::unique_ptr<Base> impl_;
};

}  // namespace weft
