// Whether a process of this host (and PID namespace) still exists: kill(pid, 0) sends no signal.
// EPERM means it exists but belongs to someone else, so only ESRCH counts as gone. Used by the
// store (is a rank that holds a lock or a spill still there?) and by the transport's failure
// detection for peers on this host (net/host_liveness.hpp).
#pragma once

#include <signal.h>

#include <cerrno>
#include <cstdint>

namespace weft {

inline bool process_alive(int64_t pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH);
}

}  // namespace weft
