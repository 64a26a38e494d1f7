// Values above the inline threshold, written by the executor into its node's store
// (object_transfer.cpp). Pulls between nodes: ObjectPuller (object_puller.hpp).
#pragma once

#include <cstdint>
#include <exception>
#include <vector>

#include "core/exec_context.hpp"
#include "weft/detail/object_state.hpp"

namespace weft::core {

// Pool thread, after a task or actor call produced `value`: a value above the inline threshold
// goes into this node's store as a primary and `value` is emptied; returns its size, or -1 when
// it stays inline. A store that cannot take it turns the result into a typed error.
int64_t store_result(const ObjectId& ret, std::vector<char>& value, bool& ok,
                     detail::ErrorInfo& err);

// The same for a result written straight into the store by the body's thread
// (detail::put_result_direct, through ExecContext::direct). Then the call's outcome: the stored
// size (-1: it took the usual path, and store_result decides), or the storing error in `err`.
int64_t direct_result(const DirectResult& direct, bool& ok, detail::ErrorInfo& err);

// A result of `size` bytes the store could not take, as the call's error.
detail::ErrorInfo result_store_error(const ObjectId& ret, size_t size, const std::exception& e);

}  // namespace weft::core
