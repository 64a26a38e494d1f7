// Whole-job checkpoints (weft/job_checkpoint.hpp): the hook, writing its entries through src/ft's
// job checkpoint file, reading them back, and the driver's stop at checkpoint_point(). Actor
// states travel by two built-in actor calls (actor_state_method, actor_load_state_method; the
// host's side is run_state_call in actor_host_checkpoints.cpp), so they are taken and loaded in
// call order like any call of the driver's.
#include "weft/job_checkpoint.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <system_error>

#include "common/log.hpp"
#include "core/job_stop.hpp"
#include "ft/build_id.hpp"
#include "ft/checkpoint_file.hpp"
#include "ft/job_checkpoint_file.hpp"

namespace weft {
namespace {

std::mutex g_hook_mu;
std::function<void(JobCheckpoint&)> g_hook;

void require_driver(const char* what) {
  if (!detail::runtime_active()) throw Error(std::string(what) + ": Weft is not running");
  if (detail::my_rank() != 0)
    throw Error(std::string(what) + " on rank " + std::to_string(detail::my_rank()) +
                ": whole-job checkpoints are the driver's (rank 0's) to take and restore");
}

std::filesystem::path checkpoint_dir(const std::filesystem::path& dir, const char* what) {
  if (!dir.empty()) return dir;
  if (!core::job_checkpoint_dir().empty()) return core::job_checkpoint_dir();
  throw ConfigError(std::string(what) +
                    ": no folder for the job checkpoint: set job_checkpoint_dir "
                    "(--weft-job-checkpoint-dir=DIR or WEFT_JOB_CHECKPOINT_DIR; "
                    "slurm/weft-requeue.sbatch sets it) or pass one");
}

ft::JobCheckpointEntry to_file_entry(detail::JobEntry e) {
  ft::JobCheckpointEntry f;
  f.kind = e.actor ? ft::JobCheckpointEntry::Kind::kActor : ft::JobCheckpointEntry::Kind::kObject;
  f.name = std::move(e.name);
  f.type_name = std::move(e.type);
  f.bytes = std::move(e.bytes);
  return f;
}

// Runs the hook and writes what it saved; returns the epoch and the file.
std::pair<uint64_t, std::string> write_now(const std::filesystem::path& dir, const char* what) {
  require_driver(what);
  const std::filesystem::path d = checkpoint_dir(dir, what);
  std::function<void(JobCheckpoint&)> hook;
  {
    std::lock_guard lk(g_hook_mu);
    hook = g_hook;
  }
  if (!hook)
    throw Error(std::string(what) +
                ": no checkpoint hook: register what to save with weft::on_job_checkpoint first");
  JobCheckpoint ck;
  hook(ck);
  ft::JobCheckpointContents contents;
  contents.epoch = core::next_job_epoch();
  for (detail::JobEntry& e : ck.take_entries())
    contents.entries.push_back(to_file_entry(std::move(e)));
  std::error_code ec;
  std::filesystem::create_directories(d, ec);  // a failure shows as the write's CheckpointError
  const std::filesystem::path file = ft::job_checkpoint_path(d);
  ft::write_job_checkpoint(file, ft::current_build_id(), contents);
  core::note_job_epoch(contents.epoch);
  WEFT_LOG(Info) << "job checkpoint " << contents.epoch << " written to " << file.string() << " ("
                 << contents.entries.size() << " entries)";
  return {contents.epoch, file.string()};
}

}  // namespace

namespace detail {

std::vector<char> fetch_actor_state(const ActorRef& a) {
  ObjectRef<std::vector<char>> r(submit_actor_call(a, actor_state_method(), {}));
  return r.get();
}

void restore_actor_state(const ActorRef& a, const std::vector<char>& state, const std::string& name,
                         const std::string& file) {
  EncodedArgs args = encode_args<std::tuple<std::vector<char>>>(state);
  ObjectRef<void> r(submit_actor_call(a, actor_load_state_method(), std::move(args)));
  try {
    r.get();
  } catch (const std::exception& e) {
    throw Error("job checkpoint " + file + ": actor '" + name +
                "' could not take its saved state: " + e.what());
  }
}

void throw_job_entry_error(const std::string& file, const std::string& name,
                           const std::string& why) {
  throw Error("job checkpoint " + file + ", entry '" + name + "': " + why);
}

std::string demangled_type(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> p(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && p ? std::string(p.get()) : mangled;
}

}  // namespace detail

const detail::JobEntry& JobRestore::entry(const std::string& name, bool actor) const {
  if (const detail::JobEntry* e = find(name, actor)) return *e;
  std::string held;
  for (const auto& e : entries_)
    if (e.actor == actor) held += (held.empty() ? "" : ", ") + e.name;
  detail::throw_job_entry_error(
      file_, name,
      std::string("there is no ") + (actor ? "actor" : "value or object") + " of that name (" +
          (held.empty() ? std::string("it has none") : "it has: " + held) +
          (contains(name, !actor) ? std::string("; there is ") +
                                        (actor ? "a value or object" : "an actor") + " of that name"
                                  : std::string()) +
          ")");
}

void core::drop_job_checkpoint_hook() {
  std::function<void(JobCheckpoint&)> gone;
  std::lock_guard lk(g_hook_mu);
  gone.swap(g_hook);
}

void on_job_checkpoint(std::function<void(JobCheckpoint&)> hook) {
  require_driver("weft::on_job_checkpoint");
  std::lock_guard lk(g_hook_mu);
  g_hook = std::move(hook);
}

uint64_t checkpoint_job(const std::filesystem::path& dir) {
  return write_now(dir, "weft::checkpoint_job").first;
}

bool stop_requested() { return core::stop_signalled(); }

void checkpoint_point() {
  if (!core::stop_signalled()) return;
  if (!core::job_stopped()) {
    WEFT_LOG(Warn) << "SIG" << core::stop_signal_name()
                   << " asked the job to stop: writing its checkpoint";
    auto [epoch, file] = write_now({}, "weft::checkpoint_point");
    core::mark_job_stopped(epoch, file);
  }
  throw JobStopped("the job was asked to stop (SIG" + core::stop_signal_name() +
                   ") and its checkpoint " + std::to_string(core::stop_checkpoint_epoch()) +
                   " is in " + core::stop_checkpoint_file() +
                   ": the next run resumes from it (weft::restore_job)");
}

std::optional<JobRestore> restore_job(const std::filesystem::path& dir) {
  require_driver("weft::restore_job");
  // No folder given or set: this run keeps no job checkpoints, so there is none to resume (a stop
  // in such a run fails naming job_checkpoint_dir instead of writing one).
  if (dir.empty() && core::job_checkpoint_dir().empty()) return std::nullopt;
  const std::filesystem::path file =
      ft::job_checkpoint_path(checkpoint_dir(dir, "weft::restore_job"));
  ft::JobCheckpointContents contents;
  try {
    // A writer that died mid-write left its temporary; none can be running before this restore.
    ft::remove_checkpoint_temporaries(file);
    contents = ft::read_job_checkpoint(file, ft::current_build_id());
  } catch (const CheckpointError& e) {
    if (e.kind() == CheckpointError::Kind::kMissing) return std::nullopt;
    throw;
  }
  core::note_job_epoch(contents.epoch);
  std::vector<detail::JobEntry> entries;
  entries.reserve(contents.entries.size());
  for (ft::JobCheckpointEntry& f : contents.entries)
    entries.push_back(detail::JobEntry{.actor = f.kind == ft::JobCheckpointEntry::Kind::kActor,
                                       .name = std::move(f.name),
                                       .type = std::move(f.type_name),
                                       .bytes = std::move(f.bytes)});
  WEFT_LOG(Info) << "job checkpoint " << contents.epoch << " read from " << file.string();
  return JobRestore(file.string(), contents.epoch, std::move(entries));
}

}  // namespace weft
