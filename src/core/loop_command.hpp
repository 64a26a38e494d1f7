// A command for the event loop: any callable taking the loop, move-only captures included (a
// PendingCall travels in one as a unique_ptr), in one allocation. A command that never runs,
// because it was still queued when the loop closed, destroys what it captured, so nothing it owns
// leaks (LeakSanitizer checks this at a clean exit; scripts/test.sh --sanitize).
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace weft::core {

class EventLoop;

class Command {
 public:
  Command() = default;
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Command> &&
                                              std::is_invocable_v<F&, EventLoop&>>>
  Command(F&& f)  // NOLINT(google-explicit-constructor): lambdas convert, as to std::function
      : impl_(std::make_unique<Impl<std::decay_t<F>>>(std::forward<F>(f))) {}

  void operator()(EventLoop& l) { impl_->run(l); }
  explicit operator bool() const { return impl_ != nullptr; }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual void run(EventLoop& l) = 0;
  };
  template <class F>
  struct Impl final : Base {
    explicit Impl(F&& fn) : f(std::move(fn)) {}
    explicit Impl(const F& fn) : f(fn) {}
    void run(EventLoop& l) override { f(l); }
    F f;
  };
  std::unique_ptr<Base> impl_;
};

}  // namespace weft::core
