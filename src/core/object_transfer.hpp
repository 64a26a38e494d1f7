// Values above the inline threshold, written by the executor into its node's store
// (object_transfer.cpp). Pulls between nodes: ObjectPuller (object_puller.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "weft/detail/object_state.hpp"

namespace weft::core {

// Pool thread, after a task or actor call produced `value`: a value above the inline threshold
// goes into this node's store as a primary and `value` is emptied; returns its size, or -1 when
// it stays inline. A store that cannot take it turns the result into a typed error.
int64_t store_result(const ObjectId& ret, std::vector<char>& value, bool& ok,
                     detail::ErrorInfo& err);

}  // namespace weft::core
