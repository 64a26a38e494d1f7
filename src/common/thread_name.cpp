#include "common/thread_name.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>

#include "common/timeline.hpp"

namespace weft {

void name_this_thread(std::string_view name) {
  thread_local bool named = false;
  timeline::name_thread(name);
  if (std::exchange(named, true)) return;
  if (static_cast<pid_t>(syscall(SYS_gettid)) == getpid()) return;  // the main thread
  // The kernel keeps 15 characters and a NUL.
  std::string os = "weft-" + std::string(name);
  for (char& c : os)
    if (c == ' ') c = '-';
  os.resize(std::min<size_t>(os.size(), 15));
  (void)pthread_setname_np(pthread_self(), os.c_str());
}

}  // namespace weft
