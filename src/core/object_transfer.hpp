// Values above the inline threshold, written by the executor into its node's store
// (object_transfer.cpp). Pulls between nodes: ObjectPuller (object_puller.hpp).
#pragma once

#include <cstdint>
#include <exception>
#include <vector>

#include "core/exec_context.hpp"
#include "weft/detail/object_state.hpp"

namespace weft::core {

// Pool thread, after a task or actor call produced its result: either `direct` says the body's
// thread already wrote it into this node's store (detail::put_result_direct, through
// ExecContext::direct), or `value` holds it, and a value above the inline threshold goes into the
// store as a primary here, `value` emptied. Returns the stored size, or -1 when the value stays
// inline. A store that could not take it turns the result into a typed error in `err`.
int64_t store_result(const ObjectId& ret, const DirectResult& direct, std::vector<char>& value,
                     bool& ok, detail::ErrorInfo& err);

// A result of `size` bytes the store could not take, as the call's error.
detail::ErrorInfo result_store_error(const ObjectId& ret, size_t size, const std::exception& e);

}  // namespace weft::core
