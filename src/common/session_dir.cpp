#include "common/session_dir.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "weft/errors.hpp"

namespace weft {
namespace {

// Launcher ids are digits in practice; anything outside [A-Za-z0-9.] becomes '_' so a name
// always parses back (no '-', no '/').
std::string clean_id(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.';
    out += ok ? c : '_';
  }
  return out;
}

const char* nonempty(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  return v && *v ? v : nullptr;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

std::string session_dir_name(const EnvLookup& env, int64_t pid) {
  const std::string p = std::to_string(pid);
  if (const char* job = nonempty(env, "SLURM_JOB_ID")) {
    std::string id = clean_id(job);
    if (const char* step = nonempty(env, "SLURM_STEP_ID")) id += "." + clean_id(step);
    return "weft-slurm-" + id + "-" + p;
  }
  const char* ompi = nonempty(env, "OMPI_MCA_ess_base_jobid");
  if (!ompi) ompi = nonempty(env, "PMIX_NAMESPACE");
  if (ompi) return "weft-mpirun-" + clean_id(ompi) + "-" + p;
  return "weft-local-" + p;
}

std::optional<SessionName> parse_session_dir_name(std::string_view name) {
  constexpr std::string_view kPrefix = "weft-";
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  const size_t dash = name.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  SessionName s;
  s.launcher = std::string(name.substr(0, dash));
  std::string_view rest = name.substr(dash + 1);
  if (s.launcher == "local") {
    if (!all_digits(rest)) return std::nullopt;
  } else if (s.launcher == "slurm" || s.launcher == "mpirun") {
    const size_t last = rest.rfind('-');
    if (last == std::string_view::npos || last == 0) return std::nullopt;
    s.job = std::string(rest.substr(0, last));
    if (s.job.find('-') != std::string::npos) return std::nullopt;
    rest = rest.substr(last + 1);
    if (!all_digits(rest)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (rest.size() > 18) return std::nullopt;
  s.pid = std::stoll(std::string(rest));
  if (s.pid <= 0) return std::nullopt;
  return s;
}

std::filesystem::path sessions_root(const EnvLookup& env, const std::string& setting) {
  if (!setting.empty()) return setting;
  if (const char* t = nonempty(env, "TMPDIR")) return t;
  return "/tmp";
}

namespace {

// Whether something accepts connections on the Unix socket at `path` (a live job's control
// socket). A path too long for sockaddr_un cannot be asked: counted as answering.
bool socket_answers(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path.string();
  if (p.size() >= sizeof addr.sun_path) return true;
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// A session folder that a dead job left under the name this process is about to take: its name
// carries this process's PID, and a PID names one live process at a time, so the job that made
// it has ended without cleaning up (killed). It must be this user's, private, and nothing may
// answer on its control socket (which rules out a live job of another PID namespace).
bool left_by_a_dead_job(const std::filesystem::path& dir) {
  const auto name = parse_session_dir_name(dir.filename().string());
  if (!name || name->pid != static_cast<int64_t>(::getpid())) return false;
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 077) != 0)
    return false;
  return !socket_answers(dir / "control.sock");
}

}  // namespace

void make_private_dir(const std::filesystem::path& dir, bool exclusive) {
  if (::mkdir(dir.c_str(), 0700) == 0) {
    ::chmod(dir.c_str(), 0700);  // the umask may have taken bits off, never added any
    return;
  }
  const int err = errno;
  if (err == EEXIST && !exclusive) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
        (st.st_mode & 077) == 0)
      return;
    throw SessionDirError("the session directory " + dir.string() +
                          " exists but is not a folder of this user with mode 0700: remove it, "
                          "or set session_dir (WEFT_SESSION_DIR) to a folder of your own");
  }
  if (err == EEXIST && left_by_a_dead_job(dir)) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (!ec && ::mkdir(dir.c_str(), 0700) == 0) {
      ::chmod(dir.c_str(), 0700);
      return;
    }
  }
  if (err == EEXIST) {
    throw SessionDirError("the session directory " + dir.string() +
                          " exists already: another job with this launcher id and rank-0 PID "
                          "left it; `weft clean` removes the folders of dead jobs");
  }
  throw SessionDirError("cannot create the session directory " + dir.string() + ": " +
                        std::strerror(err) +
                        "; set session_dir (WEFT_SESSION_DIR) or TMPDIR to a writable folder");
}

}  // namespace weft
