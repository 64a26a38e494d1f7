#include "net/host_liveness.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <filesystem>

#include "net/allgather.hpp"

namespace weft::net {
namespace {

// "host|pid-namespace|pid": two ranks may watch each other only when the first two match.
std::string identity() {
  char host[HOST_NAME_MAX + 1] = {};
  gethostname(host, sizeof host - 1);
  std::error_code ec;
  // e.g. "pid:[4026531836]"; empty where /proc is not mounted (then nobody matches by accident
  // unless both sides lack it on the same host, where PIDs are still one namespace's).
  std::string ns = std::filesystem::read_symlink("/proc/self/ns/pid", ec).string();
  return std::string(host) + "|" + ns + "|" + std::to_string(static_cast<long>(getpid()));
}

std::string without_pid(const std::string& id) { return id.substr(0, id.rfind('|')); }

}  // namespace

HostLiveness::HostLiveness(MPI_Comm world, const Topology& topo,
                           std::chrono::milliseconds interval)
    : interval_(interval), next_(std::chrono::steady_clock::now() + interval) {
  const std::vector<std::string> all = allgather_bytes(world, identity());
  if (interval_.count() <= 0) return;
  const std::string mine = without_pid(all[topo.rank]);
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    if (r == topo.rank || without_pid(all[r]) != mine) continue;
    watched_.push_back({r, std::stol(all[r].substr(all[r].rfind('|') + 1))});
  }
}

std::vector<std::pair<int, std::string>> HostLiveness::poll() {
  std::vector<std::pair<int, std::string>> gone;
  // poll() runs on every turn of the event loop: read the clock on one call in 64 only (a
  // spinning loop makes 64 calls in microseconds, a parked one in at most ~130 ms).
  if (watched_.empty() || (++calls_ & 63) != 0) return gone;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_) return gone;
  next_ = now + interval_;
  for (size_t i = 0; i < watched_.size();) {
    const Watched w = watched_[i];
    if (kill(static_cast<pid_t>(w.pid), 0) == 0 || errno != ESRCH) {
      ++i;
      continue;
    }
    gone.emplace_back(w.rank, "its process (pid " + std::to_string(w.pid) +
                                  ") on this host has exited");
    watched_[i] = watched_.back();
    watched_.pop_back();
  }
  return gone;
}

}  // namespace weft::net
