// The job's session directory on each host (common/session_dir.hpp names it) and, on rank 0,
// the control socket in it. Opened collectively before the object store (whose node folders it
// holds), so a failure is seen by every rank alike and the job stops with one message.
#pragma once

#include <mpi.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/config.hpp"
#include "core/control_server.hpp"
#include "net/topology.hpp"

namespace weft::core {

class Session {
 public:
  // Rank 0 makes the folder (0700, refused when it exists), its token and socket, and sends the
  // folder's name to every rank; a rank on another host makes the same name under its own root.
  static std::unique_ptr<Session> open(MPI_Comm world, const net::Topology& topo,
                                       const Config& cfg);
  ~Session();

  const std::filesystem::path& dir() const { return dir_; }
  ControlServer* control() { return control_.get(); }  // rank 0 only; null elsewhere
  // Rank 0: closes the socket and removes its files (the folder goes with the store's close).
  void stop_control();
  // Rank 0, before the job's shutdown (setting keep_session): the job's final state and
  // timeline, gathered from every rank, into final/state.json and final/timeline.json, which
  // `weft status|list|timeline --from DIR` read. The folder then stays (the store's close
  // removes only empty folders).
  void keep_final_state(EventLoop& loop);
  // Stops writing this rank's log file and, unless `keep`, removes it.
  void end_log(bool keep);

 private:
  std::filesystem::path dir_;
  std::filesystem::path log_file_;  // logs/rank-<r>.log; empty when it could not be opened
  std::unique_ptr<ControlServer> control_;
};

}  // namespace weft::core
