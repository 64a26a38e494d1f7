// The narrow interface between the public templates and the runtime in src/core. Only ids,
// bytes and states cross it: no MPI, UCX or HDF5 type reaches a user's translation unit.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "weft/detail/ids.hpp"
#include "weft/detail/object_state.hpp"
#include "weft/serialization.hpp"

namespace weft::detail {

// Resources and placement of one submission, already validated by the templates.
struct SubmitOptions {
  double num_cpus = 1;
  double num_gpus = 0;
  double memory = 0;
  // TaskOptions::resources in name order: one allocation to copy, where a map takes one per
  // entry (a caller that passes options converts them on every call).
  std::vector<std::pair<std::string, double>> resources;
  int max_retries = 3;
  bool retry_exceptions = false;
  std::string name;
  // actors
  int max_restarts = 0;
  int max_task_retries = 0;
  int max_concurrency = 1;
  int checkpoint_every = 0;         // calls between checkpoints (0: off)
  int64_t checkpoint_interval_ms = 0;  // time between checkpoints (0: off)
  // placement groups (0 = none)
  uint64_t placement_group = 0;
  int bundle_index = -1;
  bool capture_child_tasks = false;
  // scheduling strategy: 0 default, 1 spread, 2 node affinity (affinity_node, affinity_soft)
  uint8_t strategy = 0;
  int affinity_node = -1;
  bool affinity_soft = false;
};

// Arguments of one call, encoded: per argument a tag byte (0 = inline value, 1 = a ref to be
// resolved before the call runs) then, for inline values, a u64 length and the bytes.
struct EncodedArgs {
  serde::Buffer bytes;
  std::vector<StatePtr> refs;  // in tag-1 order
  std::vector<StatePtr> contained;  // refs serialized inside the inline values (borrowed)
};

// --- objects ---------------------------------------------------------------------------------
int my_rank();
int world_size();
bool runtime_active();
// A fresh object owned by this rank, not yet complete.
StatePtr new_owned_state();
// put(): an owned object complete at birth; `contained`: the refs serialized inside the value.
StatePtr put_bytes(std::vector<char> bytes, std::vector<StatePtr> contained = {});
// This job's tag (its job id, the same on every rank and different in every job; 0 when Weft
// is not running). Serialized refs and actor handles carry it: an id means something only in
// the job that made it, so one read back in another job is refused (throw_foreign_ref).
uint64_t job_tag();
// SerializationError: `what` (an object or actor id) was serialized by the job tagged `tag`.
[[noreturn]] void throw_foreign_ref(const std::string& what, uint64_t tag);
// The local state for an id that arrived inside a message (borrowed if owner != me).
StatePtr state_for(const ObjectId& id);
// Blocks until `s` is done or `timeout` passes (negative: forever). Asks the owner for the value
// if this rank borrows it. Returns false on timeout. Inside a task, releases the task's CPU
// slot while blocked and runs other ready tasks of this rank meanwhile.
bool wait_done(const StatePtr& s, std::chrono::nanoseconds timeout);
// Waits until at least `num_returns` of `states` are done or `timeout` passes; returns readiness.
std::vector<bool> wait_some(const std::vector<StatePtr>& states, size_t num_returns,
                            std::chrono::nanoseconds timeout);
// Throws the typed weft::Error stored in a failed state.
[[noreturn]] void throw_error(const ObjectState& s);

// --- tasks -----------------------------------------------------------------------------------
// The options of weft::task(f) without .options(): one object for the whole process, converted
// once. submit_task knows it by its address and skips validating it and building its demand.
const SubmitOptions& default_submit_options();
StatePtr submit_task(uint64_t function_id, EncodedArgs args, const SubmitOptions& opts);

// --- actors ----------------------------------------------------------------------------------
struct ActorRef {
  ActorId id;
  int32_t rank = -1;       // where the actor lives (a restart moves it: core/actor_restarts.cpp)
  uint64_t class_id = 0;
  int32_t max_restarts = 0;      // ActorOptions::max_restarts: callers wait for a restart
  int32_t max_task_retries = 0;  // ActorOptions::max_task_retries: callers keep calls in flight
};
// Returns at once with a handle whose rank is -1; placement and construction follow.
ActorRef create_actor(uint64_t class_id, EncodedArgs args, const SubmitOptions& opts);
// The rank of the actor's current incarnation: the handle's own when it has not failed, else
// once the actor is placed (again, after a restart; its creator is asked). Throws ActorDiedError
// (with the reason) when it never will be.
int actor_rank(const ActorRef& actor);
// The actor's rank if this rank has learnt it (it placed the actor, or asked its creator), else
// -1; never blocks. Handles fill their rank from it before they are sent or called through.
int actor_rank_known(const ActorRef& actor);
// The built-in method every actor answers once constructed (ActorHandle::ready()).
uint64_t actor_ready_method();
// The built-in method behind weft::checkpoint(handle): writes the actor's checkpoint now and
// completes once it is durable.
uint64_t actor_checkpoint_method();
// Built-in methods behind whole-job checkpoints (job_checkpoint.hpp): the first answers the
// actor's serialized state (a std::vector<char>); the second takes one (its one argument) and
// loads it into the actor. Both need a serializable class and run in call order.
uint64_t actor_state_method();
uint64_t actor_load_state_method();
StatePtr submit_actor_call(const ActorRef& actor, uint64_t method_id, EncodedArgs args);
void kill_actor(const ActorRef& actor);
std::optional<ActorRef> lookup_named_actor(const std::string& name);

// Rank and device information for the code running now.
std::string class_name(uint64_t class_id);

}  // namespace weft::detail
