#include "sessions.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "common/control_protocol.hpp"
#include "common/process_alive.hpp"

namespace weft::cli {

std::filesystem::path default_root() {
  const char* s = std::getenv("WEFT_SESSION_DIR");
  return sessions_root([](const char* n) { return std::getenv(n); }, s ? s : "");
}

std::vector<SessionInfo> scan_sessions(const std::filesystem::path& root) {
  std::vector<SessionInfo> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    auto name = parse_session_dir_name(e.path().filename().string());
    if (!name) continue;
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    SessionInfo s{e.path(), *name, process_alive(name->pid),
                  std::filesystem::exists(e.path() / control::kSocketName)};
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.dir < b.dir; });
  return out;
}

SessionInfo pick_session(const std::filesystem::path& root, const std::string& session,
                         const std::string& job) {
  if (!session.empty()) {
    const std::filesystem::path dir(session);
    auto name = parse_session_dir_name(dir.filename().string());
    if (!name)
      throw std::runtime_error(session +
                               " is not a Weft session directory (weft-<launcher>-<job>-<pid>)");
    return {dir, *name, process_alive(name->pid),
            std::filesystem::exists(dir / control::kSocketName)};
  }
  std::vector<SessionInfo> live;
  for (auto& s : scan_sessions(root)) {
    if (!s.alive || !s.serving) continue;
    if (!job.empty() && s.name.job != job && std::to_string(s.name.pid) != job) continue;
    live.push_back(std::move(s));
  }
  if (live.size() == 1) return live.front();
  std::string where = " under " + root.string() + " (WEFT_SESSION_DIR, else TMPDIR, else /tmp)";
  if (live.empty()) {
    throw std::runtime_error(job.empty()
                                 ? "no running Weft job of yours" + where + "; pass --session DIR"
                                 : "no running Weft job with job id or rank-0 PID " + job + where);
  }
  std::string list;
  for (const auto& s : live) list += "\n  " + s.dir.string();
  throw std::runtime_error(std::to_string(live.size()) + " running Weft jobs" + where +
                           "; pass --session DIR or --job ID:" + list);
}

std::string read_token(const std::filesystem::path& dir) {
  std::ifstream in(dir / control::kTokenName);
  std::string t;
  if (!in || !std::getline(in, t))
    throw std::runtime_error("cannot read " + (dir / control::kTokenName).string() +
                             ": only the job's user can (mode 0600)");
  return t;
}

}  // namespace weft::cli
