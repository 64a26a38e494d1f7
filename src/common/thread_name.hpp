// A runtime thread's name: on its timeline track and, as "weft-<name>", in the OS, so `top -H`,
// `ps -L`, gdb and perf tell the loop, the pool and the heartbeat apart. The process's main
// thread keeps its OS name (that is the program's name in `ps` and `top`); it is named on the
// timeline only.
#pragma once

#include <string_view>

namespace weft {

// First call on a thread wins (for the timeline; the OS name follows the same rule).
void name_this_thread(std::string_view name);

}  // namespace weft
