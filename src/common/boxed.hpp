// Boxed<T>: a value kept out of line, absent until first written; a copy copies the value. For
// the rarely set parts of a struct that is queued or copied by the thousand: the struct carries
// one pointer in their place (ExecItem's actor, group and name parts, core/exec_item.hpp).
#pragma once

#include <memory>

namespace weft {

template <class T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;

  // Reads see a default-made T while nothing was written.
  const T& operator*() const { return p_ ? *p_ : empty(); }
  const T* operator->() const { return &**this; }
  // The value, made on first use.
  T& mut() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }
  bool has_value() const { return p_ != nullptr; }

 private:
  static const T& empty() {
    static const T e{};
    return e;
  }
  std::unique_ptr<T> p_;
};

}  // namespace weft
