// Running one registered function or method on a pool thread: the lookup, the thread's
// ExecContext for the duration of the call, and the conversion of anything it throws into the
// ErrorInfo the caller receives. Shared by tasks and actor calls.
#pragma once

#include <string>
#include <vector>

#include "core/exec_context.hpp"
#include "weft/detail/arg_block.hpp"
#include "weft/detail/object_state.hpp"
#include "weft/serialization.hpp"

namespace weft::core {

// The exception being handled, as the ErrorInfo of a failed call of `function` on `rank`. Only
// inside a catch block.
detail::ErrorInfo current_exception_error(int rank, const std::string& function);

// Runs `invoke`, turning whatever it throws into an ErrorInfo (kind kNone when it returned). A
// template, not a std::function: the body's lambda would cost an allocation per task.
template <class F>
detail::ErrorInfo run_guarded(int rank, const std::string& function, F&& invoke) {
  try {
    invoke();
    return {};
  } catch (...) {
    return current_exception_error(rank, function);
  }
}

// Looks `fn_id` up and runs it on `self` (null for free functions) with `ctx` installed as the
// thread's ExecContext (its `function` is filled in here). `what` names the kind of id in the
// error when it is not registered on this rank. `contained` receives the refs serialized into
// the result (their receiver borrows them: refcount.cpp). `name`: TaskOptions::name, shown in the
// error beside the function's name.
// "fn 'name'" for a task given TaskOptions::name, else the function's name: errors and logs.
inline std::string task_label(const std::string& function, const std::string& name) {
  return name.empty() ? function : function + " '" + name + "'";
}

detail::ErrorInfo invoke_registered(int rank, uint64_t fn_id, void* self,
                                    const detail::CallArgs& args, ExecContext ctx,
                                    serde::Buffer& out, const char* what,
                                    std::vector<detail::StatePtr>* contained,
                                    const std::string& name = {});

// A call's argument block and the stored values its kStored entries name, pinned (in order).
using ArgPins = std::vector<std::shared_ptr<const detail::Payload>>;
inline detail::CallArgs call_args(const std::vector<char>& block, const ArgPins& pins = {}) {
  return {block.data(), block.size(), pins.data(), pins.size()};
}

}  // namespace weft::core
