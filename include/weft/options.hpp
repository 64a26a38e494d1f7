// Options of tasks and actors. Names and defaults follow Ray's where Ray users would look for
// them; fields are declared in the order designated initializers use them in examples.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "weft/placement_group.hpp"
#include "weft/scheduling_strategy.hpp"

namespace weft {

struct TaskOptions {
  std::string name;                         // shown in errors and `weft list tasks`
  double num_cpus = 1;                      // CPU slots held while the task runs
  double num_gpus = 0;
  std::map<std::string, double> resources;  // custom resources, e.g. {{"special", 1}}
  double memory = 0;                        // bytes of heap the task needs (scheduling only)
  int max_retries = 3;                      // retries after system failures (a dead rank)
  bool retry_exceptions = false;            // also retry when the task itself throws
  PlacementGroup placement_group;           // run inside this group's bundles (none: anywhere)
  int bundle_index = -1;                    // that bundle; -1 = any bundle with room
  bool capture_child_tasks = false;         // tasks it submits default to the same group
  SchedulingStrategy scheduling_strategy;   // DefaultStrategy, SpreadStrategy or NodeAffinity
};

struct ActorOptions {
  std::string name;                         // a named actor can be found with get_actor<T>(name)
  double num_cpus = 0;                      // held for the actor's lifetime; 0 so hundreds fit
  double num_gpus = 0;
  std::map<std::string, double> resources;
  double memory = 0;
  int max_restarts = 0;                     // restarts after its rank dies; -1 = without limit
  int max_task_retries = 0;                 // calls in flight at a death re-sent to the restart
  // Checkpoints of a serializable actor class (a serialize(Archive&, unsigned) member, or free
  // save/load): its state is written after every `checkpoint_every` calls (0 = off) and after
  // a call that ends `checkpoint_interval` or more after the last write (0 = off); a restart
  // rebuilds it from the last one. weft::checkpoint(handle) writes one now.
  int checkpoint_every = 0;
  std::chrono::milliseconds checkpoint_interval{0};
  int max_concurrency = 1;                  // >1: that many calls may run at once
  PlacementGroup placement_group;           // live inside this group's bundles
  int bundle_index = -1;                    // that bundle; -1 = any bundle with room
  bool capture_child_tasks = false;         // tasks its methods submit default to the group
  SchedulingStrategy scheduling_strategy;   // where it lives: Default (spread), Spread, NodeAffinity
};

}  // namespace weft
