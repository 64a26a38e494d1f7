#include "core/session.hpp"

#include <unistd.h>

#include <cstdlib>

#include "common/log.hpp"
#include "common/session_dir.hpp"
#include "weft/errors.hpp"

namespace weft::core {
namespace {

const char* real_env(const char* name) { return std::getenv(name); }

// How long the control socket waits for the loop to build a snapshot before "busy".
constexpr std::chrono::milliseconds kLoopTimeout{2000};

}  // namespace

std::unique_ptr<Session> Session::open(MPI_Comm world, const net::Topology& topo,
                                       const Config& cfg) {
  auto s = std::unique_ptr<Session>(new Session());
  const std::filesystem::path root = sessions_root(real_env, cfg.get("session_dir", ""));
  std::string error;
  char name[256] = {0};
  if (topo.rank == 0) {
    const std::string n = session_dir_name(real_env, ::getpid());
    std::copy(n.begin(), n.begin() + std::min<size_t>(n.size(), sizeof name - 1), name);
    try {
      make_private_dir(root / n, /*exclusive=*/true);
      try {
        s->control_ = std::make_unique<ControlServer>(root / n, kLoopTimeout);
      } catch (...) {
        std::error_code ec;
        std::filesystem::remove(root / n, ec);
        throw;
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, world);
  s->dir_ = root / name;
  // Another host: the same name under this host's root (ranks of rank 0's host use its folder).
  if (topo.rank != 0 && topo.host_of_rank[topo.rank] != topo.host_of_rank[0]) {
    try {
      make_private_dir(s->dir_, /*exclusive=*/false);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  int bad = error.empty() ? 0 : 1, first_bad = topo.size;
  int mine = bad ? topo.rank : topo.size;
  MPI_Allreduce(&mine, &first_bad, 1, MPI_INT, MPI_MIN, world);
  if (first_bad < topo.size) {
    s->control_.reset();
    throw SessionDirError(bad ? error
                              : "rank " + std::to_string(first_bad) +
                                    " could not make the job's session directory " +
                                    s->dir_.string() + " (that rank's error says why)");
  }
  WEFT_LOG(Debug) << "session directory " << s->dir_.string();
  return s;
}

Session::~Session() { stop_control(); }

void Session::stop_control() {
  if (control_) control_->stop();
  control_.reset();
}

}  // namespace weft::core
