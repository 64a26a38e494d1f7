// What the current thread is running, if it is a pool thread: blocking get() needs to know
// whether it holds a CPU slot to lend out, and errors name the function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/detail/ids.hpp"
#include "weft/detail/object_state.hpp"

namespace weft::core {

// The placement group a task or actor runs in (pg 0: none) and the GPU devices it was given.
// Tasks it submits inherit the group when `capture` is set.
struct PgContext {
  uint64_t pg = 0;
  int32_t bundle = -1;  // -1 until the executing rank picks one of the group's bundles
  bool capture = false;
  std::vector<int> gpus;
  bool is_default() const { return pg == 0 && bundle == -1 && !capture && gpus.empty(); }
};

// Where a body's large result may be written straight into the node store
// (detail::put_result_direct): the call's return id, and what became of it.
struct DirectResult {
  ObjectId ret;
  int64_t stored = -1;                     // its size in the store; -1: the usual path
  std::optional<detail::ErrorInfo> error;  // it could not be stored: the call's error
};

struct ExecContext {
  double cpus = 0;             // CPU slots the running task holds
  const char* function = "";   // its registered name
  uint32_t depth = 0;          // nesting: 0 for the driver's calls, parent + 1 below
  const PgContext* placement = nullptr;  // group and GPUs (null: none)
  DirectResult* direct = nullptr;        // null: the result takes the usual path
};

ExecContext*& current_exec();

}  // namespace weft::core
