#include "core/session.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/log.hpp"
#include "common/session_dir.hpp"
#include "core/state_gather.hpp"
#include "core/state_queries.hpp"
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
  // This rank's log file, for `weft logs` (docs/operations.md, "Session directory and files").
  std::error_code ec;
  std::filesystem::create_directory(s->dir_ / "logs", ec);
  s->log_file_ = s->dir_ / "logs" / ("rank-" + std::to_string(topo.rank) + ".log");
  if (!log::open_file(s->log_file_.string())) {
    WEFT_LOG(Warn) << "cannot write the log file " << s->log_file_.string() << ": "
                   << std::strerror(errno) << "; weft logs will not show this rank";
    s->log_file_.clear();
  }
  WEFT_LOG(Debug) << "session directory " << s->dir_.string();
  return s;
}

void Session::keep_final_state(EventLoop& loop) {
  const std::filesystem::path final_dir = dir_ / "final";
  std::error_code ec;
  std::filesystem::create_directory(final_dir, ec);
  // Each file written whole under a temporary name, then renamed: a reader sees all or nothing.
  auto keep = [&](const char* name, uint8_t want) {
    std::optional<nlohmann::json> j;
    std::string why;
    try {
      j = gather_and_wait(loop, want, kLoopTimeout);
      if (!j) why = "rank 0's loop did not answer";
    } catch (const std::exception& e) {
      why = e.what();
    }
    const std::filesystem::path to = final_dir / name, tmp = final_dir / (std::string(name) + ".tmp");
    if (j) {
      std::ofstream out(tmp, std::ios::trunc);
      out << j->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      out.close();
      if (out && std::rename(tmp.c_str(), to.c_str()) == 0) return;
      why = "cannot write " + to.string() + ": " + std::strerror(errno);
      std::filesystem::remove(tmp, ec);
    }
    WEFT_LOG(Warn) << "keep_session: the job's final " << name << " is not kept: " << why;
  };
  keep("state.json", kWantObjects);
  keep("timeline.json", kWantTimeline);
  WEFT_LOG(Info) << "keep_session: the session directory " << dir_.string()
                 << " stays, with final/state.json, final/timeline.json and logs/ (weft status "
                    "--from "
                 << dir_.string() << ")";
}

void Session::end_log(bool keep) {
  log::close_file();
  std::error_code ec;
  if (!keep && !log_file_.empty()) std::filesystem::remove(log_file_, ec);
}

Session::~Session() { stop_control(); }

void Session::stop_control() {
  if (control_) control_->stop();
  control_.reset();
}

}  // namespace weft::core
