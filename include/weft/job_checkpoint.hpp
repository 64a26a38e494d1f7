// Whole-job checkpoints: a driver saves chosen values, objects and actors under names in one HDF5
// file, and a later run of the job (a Slurm requeue, a restart by hand) restores them by name.
//
//   weft::on_job_checkpoint([&](weft::JobCheckpoint& ck) {
//     ck.save("step", step);      // a value of the driver
//     ck.save("grid", grid);      // an ObjectRef<T>: its value
//     ck.save("stats", stats);    // an ActorHandle<A>: the actor's state, taken in call order
//   });
//   if (auto r = weft::restore_job()) {       // the file an earlier run wrote, if any
//     step = r->value<int>("step");
//     grid = r->object<Grid>("grid");
//     stats = r->actor<Stats>("stats", weft::actor<Stats>());  // constructed, then its state
//   }
//   for (; step < steps; ++step) {
//     ...
//     weft::checkpoint_point();   // after SIGUSR1: runs the hook, writes the file, stops the job
//   }
//
// The stop signal (setting stop_signal, default USR1: what `sbatch --signal=B:USR1@<s>` and
// slurm/weft-requeue.sbatch send before the time limit) only marks the job as asked to stop. The
// hook runs on the driver's thread at its next checkpoint_point(), where the driver's own
// variables are between steps and agree with the objects and actors it saves; the file is written
// durably there, and the job ends with exit code requeue_exit_code (85) on every rank, which the
// template turns into `scontrol requeue`. checkpoint_job() writes one at any time (say every N
// steps, so that a lost node costs at most N steps). The file is <job_checkpoint_dir>/job.ckpt.h5,
// replaced whole by each write (temporary, fsync, rename): a crash mid-write keeps the last one.
// docs/api.md, "Whole-job checkpoints".
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "weft/actor.hpp"
#include "weft/detail/call_args.hpp"
#include "weft/detail/registry.hpp"
#include "weft/object_ref.hpp"
#include "weft/serialization.hpp"

namespace weft {

namespace detail {
// One named entry on its way into or out of a job checkpoint file.
struct JobEntry {
  bool actor = false;
  std::string name;
  std::string type;  // typeid(T).name() of a value, or the actor class's registered name
  std::vector<char> bytes;
};
// The actor's state, serialized by its host after the calls this caller made before.
std::vector<char> fetch_actor_state(const ActorRef& a);
// Loads `state` into the actor (constructed already) before any other call of this caller.
void restore_actor_state(const ActorRef& a, const std::vector<char>& state, const std::string& name,
                         const std::string& file);
[[noreturn]] void throw_job_entry_error(const std::string& file, const std::string& name,
                                        const std::string& why);
// Type names for messages: demangled from typeid(T).name() (what an entry's type holds).
std::string demangled_type(const std::string& mangled);
}  // namespace detail

// What one checkpoint holds: filled by the hook given to on_job_checkpoint. Names are unique per
// kind (values and objects share one kind, actors are the other).
class JobCheckpoint {
 public:
  // A value of the driver (any type Weft can serialize), encoded now.
  template <class T>
  void save(const std::string& name, const T& value) {
    static_assert(!std::is_pointer_v<T>, "JobCheckpoint::save of a pointer: save the value");
    detail::JobEntry e{.name = name, .type = typeid(T).name()};
    serde::Buffer b;
    serde::encode(b, value);
    e.bytes = b.take();
    entries_.push_back(std::move(e));
  }
  // An object's value (waits for it; a failed object's error is thrown here).
  template <class T>
  void save(const std::string& name, const ObjectRef<T>& ref) {
    static_assert(!std::is_void_v<T>, "JobCheckpoint::save of an ObjectRef<void>: no value");
    save(name, ref.get());
  }
  // An actor's state (its class must be serializable, as for actor checkpoints), taken by the
  // actor after the calls this driver made before; waits for it.
  template <class A>
  void save(const std::string& name, const ActorHandle<A>& actor) {
    static_assert(detail::checkpointable<A>,
                  "JobCheckpoint::save of an actor whose class is not serializable: give it a "
                  "`template <class Archive> void serialize(Archive&, unsigned)` member");
    if (!actor.valid())
      throw Error("JobCheckpoint::save(\"" + name + "\") of an empty ActorHandle");
    entries_.push_back(detail::JobEntry{.actor = true,
                                        .name = name,
                                        .type = detail::class_name(detail::ActorClass<A>::id),
                                        .bytes = detail::fetch_actor_state(actor.ref())});
  }

  const std::vector<detail::JobEntry>& entries() const { return entries_; }
  std::vector<detail::JobEntry> take_entries() { return std::move(entries_); }

 private:
  std::vector<detail::JobEntry> entries_;
};

// A job checkpoint read back: restore_job()'s answer.
class JobRestore {
 public:
  JobRestore(std::string file, uint64_t epoch, std::vector<detail::JobEntry> entries)
      : file_(std::move(file)), epoch_(epoch), entries_(std::move(entries)) {}

  const std::string& file() const { return file_; }
  // 1 for the job's first checkpoint, then 2, ... (it counts on across requeues).
  uint64_t epoch() const { return epoch_; }
  // Whether a value or object (or, with actor = true, an actor) of that name was saved.
  bool contains(const std::string& name, bool actor = false) const {
    return find(name, actor) != nullptr;
  }

  // A saved value or object's value, as the type it was saved as; weft::Error naming the file
  // and the entry when there is none, or when it was saved as another type.
  template <class T>
  T value(const std::string& name) const {
    const detail::JobEntry& e = entry(name, false);
    if (e.type != typeid(T).name())
      detail::throw_job_entry_error(file_, name,
                                    "it was saved as " + detail::demangled_type(e.type) +
                                        ", not as the " + detail::demangled_type(typeid(T).name()) +
                                        " asked for");
    try {
      return serde::from_bytes<T>(e.bytes.data(), e.bytes.size());
    } catch (const std::exception& ex) {
      detail::throw_job_entry_error(file_, name, std::string("it does not decode: ") + ex.what());
    }
  }
  // The same value put in the object store again: a ref owned by the driver of this run.
  template <class T>
  ObjectRef<T> object(const std::string& name) const {
    return put(value<T>(name));
  }
  // The actor made by `creator` (weft::actor<A>(ctor args...).options(...)), with the saved state
  // loaded into it before any call reaches it; returns once the state is in.
  template <class A>
  ActorHandle<A> actor(const std::string& name, ActorCreator<A> creator) const {
    const detail::JobEntry& e = entry(name, true);
    const std::string cls = detail::class_name(detail::ActorClass<A>::id);
    if (e.type != cls)
      detail::throw_job_entry_error(
          file_, name, "it holds the state of a " + e.type + " actor, not of a " + cls);
    ActorHandle<A> h = creator.remote();
    try {
      detail::restore_actor_state(h.ref(), e.bytes, name, file_);
    } catch (...) {
      detail::kill_actor(h.ref());  // an actor without its state is not the one asked for
      throw;
    }
    return h;
  }

 private:
  const detail::JobEntry* find(const std::string& name, bool actor) const {
    for (const auto& e : entries_)
      if (e.actor == actor && e.name == name) return &e;
    return nullptr;
  }
  const detail::JobEntry& entry(const std::string& name, bool actor) const;

  std::string file_;
  uint64_t epoch_ = 0;
  std::vector<detail::JobEntry> entries_;
};

// What a checkpoint of this job saves: the hook runs on the driver's thread, in checkpoint_job()
// and in checkpoint_point() after the stop signal. One hook per job; a second call replaces it.
// Only the driver (rank 0) may call these.
void on_job_checkpoint(std::function<void(JobCheckpoint&)> hook);

// Runs the hook and writes its entries to `dir`/job.ckpt.h5 (default: the setting
// job_checkpoint_dir) durably; returns the checkpoint's epoch. ConfigError when neither names a
// folder; CheckpointError (the file, the reason) when the file cannot be written.
uint64_t checkpoint_job(const std::filesystem::path& dir = {});

// True once the stop signal (setting stop_signal) reached the driver's process.
bool stop_requested();

// Where the driver can stop: returns at once unless stop_requested(). Then it runs the hook,
// writes the checkpoint and throws weft::JobStopped, which weft::run turns into the exit code
// requeue_exit_code on every rank (also when the driver catches it: the job is stopping).
void checkpoint_point();

// The last job checkpoint written to `dir` (default: job_checkpoint_dir), or nullopt when there is
// none (or neither names a folder: a run that keeps no job checkpoints). A file that is damaged,
// truncated, foreign or from another build is a CheckpointError naming it: never a silent fresh
// start.
std::optional<JobRestore> restore_job(const std::filesystem::path& dir = {});

}  // namespace weft
