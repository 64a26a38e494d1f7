// Finding a job's session directory from the CLI: the session folders under the root
// (WEFT_SESSION_DIR, else TMPDIR, else /tmp) whose rank-0 PID is alive and that hold a socket.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/session_dir.hpp"

namespace weft::cli {

struct SessionInfo {
  std::filesystem::path dir;
  SessionName name;
  bool alive = false;    // rank 0's PID exists
  bool serving = false;  // control.sock is there
};

std::filesystem::path default_root();
// Every session folder of this user under `root`, sorted by name.
std::vector<SessionInfo> scan_sessions(const std::filesystem::path& root);
// The one session to talk to: `session` when given, else the live one whose job id or PID is
// `job`, else the only live one; throws std::runtime_error saying what to pass otherwise.
SessionInfo pick_session(const std::filesystem::path& root, const std::string& session,
                         const std::string& job);
std::string read_token(const std::filesystem::path& dir);

}  // namespace weft::cli
