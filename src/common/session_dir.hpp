// A job's session directory: the one folder on a host where a Weft job keeps its files (the
// control socket and its token on rank 0's host, each node's spill folder, the default actor
// checkpoints). Its name says which launcher started the job, the job's id there, and rank 0's
// PID, so `weft` can find the jobs running on a node and tell live ones from dead ones:
//   weft-slurm-<SLURM_JOB_ID>[.<SLURM_STEP_ID>]-<pid>   under Slurm (srun)
//   weft-mpirun-<Open MPI job id>-<pid>                 under mpirun
//   weft-local-<pid>                                    a singleton (./app without a launcher)
// Pure naming and parsing, plus the 0700 folder itself: no MPI, so the CLI shares it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace weft {

// Looks a variable up (std::getenv in the runtime; a map in tests). Null when unset.
using EnvLookup = std::function<const char*(const char*)>;

struct SessionName {
  std::string launcher;  // "slurm", "mpirun" or "local"
  std::string job;       // the launcher's job id ("" for local)
  int64_t pid = 0;       // rank 0's PID
};

// The folder name for a job whose rank 0 has `pid`, from the launcher's variables.
std::string session_dir_name(const EnvLookup& env, int64_t pid);
// The parts of a session folder's name; nullopt when `name` is not one (weft-example-x, ...).
std::optional<SessionName> parse_session_dir_name(std::string_view name);

// The folder session directories are made in: `setting` (session_dir) when not empty, else
// $TMPDIR, else /tmp.
std::filesystem::path sessions_root(const EnvLookup& env, const std::string& setting);

// Makes `dir` with mode 0700 (its parent must exist). `exclusive`: a folder already there is an
// error (SessionDirError), since it belongs to another job; otherwise an existing folder of this
// user is accepted (another node of this host made it) and one of another user is refused.
void make_private_dir(const std::filesystem::path& dir, bool exclusive);

}  // namespace weft
