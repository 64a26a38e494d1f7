// Running one registered function or method on a pool thread: the lookup, the thread's
// ExecContext for the duration of the call, and the conversion of anything it throws into the
// ErrorInfo the caller receives. Shared by tasks and actor calls.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/exec_context.hpp"
#include "weft/detail/arg_block.hpp"
#include "weft/detail/object_state.hpp"
#include "weft/serialization.hpp"

namespace weft::core {

// Runs `invoke`, turning whatever it throws into an ErrorInfo (kind kNone when it returned).
detail::ErrorInfo run_guarded(int rank, const std::string& function,
                              const std::function<void()>& invoke);

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
