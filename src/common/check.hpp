// Internal invariants. A failed check prints the condition, the place and the rank, then aborts:
// an invariant that does not hold means the runtime's state can no longer be trusted. User-facing
// failures are never checks: they are typed weft::Error exceptions.
#pragma once

#include <cstdlib>
#include <sstream>

#include "common/log.hpp"

namespace weft::detail {

class CheckFailure {
 public:
  CheckFailure(const char* cond, const char* file, int line) : file_(file), line_(line) {
    os_ << "internal check failed: " << cond << " ";
  }
  [[noreturn]] ~CheckFailure() {
    ::weft::log::Line(::weft::log::Level::kError, file_, line_) << os_.str();
    std::abort();
  }
  template <class T>
  CheckFailure& operator<<(const T& v) {
    os_ << v;
    return *this;
  }

 private:
  const char* file_;
  int line_;
  std::ostringstream os_;
};

}  // namespace weft::detail

#define WEFT_CHECK(cond)                          \
  __builtin_expect(!!(cond), 1) ? (void)0         \
                                : ::weft::log::Voidify() & \
                                      ::weft::detail::CheckFailure(#cond, __FILE__, __LINE__)
