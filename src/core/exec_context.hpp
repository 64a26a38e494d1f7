// What the current thread is running, if it is a pool thread: blocking get() needs to know
// whether it holds a CPU slot to lend out, and errors name the function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft::core {

// The placement group a task or actor runs in (pg 0: none) and the GPU devices it was given.
// Tasks it submits inherit the group when `capture` is set.
struct PgContext {
  uint64_t pg = 0;
  int32_t bundle = -1;  // -1 until the executing rank picks one of the group's bundles
  bool capture = false;
  std::vector<int> gpus;
};

struct ExecContext {
  double cpus = 0;             // CPU slots the running task holds
  const char* function = "";   // its registered name
  uint32_t depth = 0;          // nesting: 0 for the driver's calls, parent + 1 below
  const PgContext* placement = nullptr;  // group and GPUs (null: none)
};

ExecContext*& current_exec();

}  // namespace weft::core
