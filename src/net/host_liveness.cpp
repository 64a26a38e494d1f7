#include "net/host_liveness.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/process_alive.hpp"
#include "net/allgather.hpp"

namespace weft::net {
namespace {

// "pid-namespace|pid". The namespace id (e.g. "pid:[4026531836]") tells apart ranks that share
// a host but not PIDs (containers); hosts themselves come from the topology.
std::string identity() {
  std::error_code ec;
  std::string ns = std::filesystem::read_symlink("/proc/self/ns/pid", ec).string();
  return ns + "|" + std::to_string(static_cast<long>(getpid()));
}

std::string namespace_of(const std::string& id) { return id.substr(0, id.rfind('|')); }

}  // namespace

HostLiveness::HostLiveness(MPI_Comm world, const Topology& topo,
                           std::chrono::milliseconds interval)
    : interval_(interval), next_(std::chrono::steady_clock::now() + interval) {
  const std::vector<std::string> all = allgather_bytes(world, identity());
  if (interval_.count() <= 0 || topo.host_of_rank.size() != all.size()) return;
  const int host = topo.host_of_rank[topo.rank];
  const std::string ns = namespace_of(all[topo.rank]);
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    if (r == topo.rank || topo.host_of_rank[r] != host || namespace_of(all[r]) != ns) continue;
    watched_.push_back({r, std::stol(all[r].substr(all[r].rfind('|') + 1))});
  }
}

std::optional<bool> HostLiveness::running(int rank) const {
  for (const Watched& w : watched_) {
    if (w.rank != rank) continue;
    // "pid (comm) S ...": the state follows the last ')' (comm may hold spaces and parentheses).
    std::ifstream in("/proc/" + std::to_string(w.pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) return false;  // gone
    const char state = stat[close + 2];
    return state != 'T' && state != 't' && state != 'Z' && state != 'X';
  }
  return std::nullopt;
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
    if (process_alive(w.pid)) {
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
