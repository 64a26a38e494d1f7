// What the current thread is running, if it is a pool thread: blocking get() needs to know
// whether it holds a CPU slot to lend out, and errors name the function.
#pragma once

#include <cstdint>
#include <string>

namespace weft::core {

struct ExecContext {
  double cpus = 0;             // CPU slots the running task holds
  const char* function = "";   // its registered name
  uint32_t depth = 0;          // nesting: 0 for the driver's calls, parent + 1 below
};

ExecContext*& current_exec();

}  // namespace weft::core
