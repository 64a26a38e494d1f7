// Work that runs on this rank's pool, gated by its resources (exec_gate.hpp), and where a task
// or an actor may run (TaskOptions/ActorOptions::scheduling_strategy).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/boxed.hpp"
#include "common/handoff_pool.hpp"
#include "core/exec_context.hpp"
#include "core/invoke.hpp"
#include "sched/gpu_allocator.hpp"
#include "sched/policy.hpp"
#include "sched/resource_set.hpp"
#include "weft/detail/ids.hpp"
#include "weft/detail/object_state.hpp"

namespace weft::core {

using detail::StatePtr;

struct Strategy {
  sched::Policy policy = sched::Policy::kDefault;
  int node = -1;      // kNodeAffinity: the node id
  bool soft = false;  // kNodeAffinity: elsewhere when that node has no room now
  bool hard_affinity() const { return policy == sched::Policy::kNodeAffinity && !soft; }
};

// The parts of an item that most tasks leave at their defaults, out of line (Boxed): an actor
// creation's identity, a group's bundle and GPUs, a name. A plain task is 192 bytes without them.
struct ExecRare : HandoffAllocated {
  ActorId actor;  // creations
  int max_concurrency = 1;
  std::string name;
  PgContext placement;    // its group and bundle; gpus filled when admitted
  sched::GpuGrant grant;  // GPU devices held while it runs
};

struct ExecItem : HandoffAllocated {  // made by the loop, often freed by a worker
  enum class Kind : uint8_t { kTask, kActorCreate };
  Kind kind = Kind::kTask;
  int owner = -1;      // who gets the result
  ObjectId ret;        // tasks
  uint64_t fn_id = 0;  // function or class
  sched::ResourceSet need;
  std::vector<char> args;  // argument block: inline and kStored entries (arg_block.hpp)
  // The stored values its kStored entries name, opened on this node and pinned for the call
  // (stored_args.cpp): the body decodes them where they lie.
  ArgPins pins;
  // Nesting depth of the submitting task. The gate admits deeper work first, so nested
  // tasks run depth-first and a task blocked in get() waits on a short chain, not a whole level.
  uint32_t depth = 0;
  Boxed<ExecRare> rare;         // read as rare->placement; written through rare.mut()
  std::vector<StatePtr> holds;  // refs inside `args`, alive (with their credits) until it ends
  Strategy strategy;            // tasks: a hard node affinity limits who may steal it
  bool local_only = false;      // its stored arguments were pulled to this node: not stolen
};
// A queued task takes a 192-byte HandoffPool block (the next size class is 256).
static_assert(sizeof(ExecItem) <= 192);

// An item travels by this pointer from its arrival to its end (gate, pool, the result's command):
// moving an ExecItem by value (304 bytes of sets, vectors and strings then) cost ~220
// instructions a move, ten moves a task (callgrind, 1-rank async tasks).
using ExecItemPtr = std::unique_ptr<ExecItem>;

}  // namespace weft::core
