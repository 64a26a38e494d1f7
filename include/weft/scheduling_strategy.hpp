// Where a task or an actor runs, with Ray's meaning (TaskOptions::scheduling_strategy,
// ActorOptions::scheduling_strategy).
#pragma once

#include <variant>

namespace weft {

// Ray's hybrid policy: the node that holds the largest ref arguments when it has room, else this
// rank, else pack onto ranks below half load, then spread. Work that waits at a busy rank is
// taken by an idle one (docs/architecture.md, "Scheduling").
struct DefaultStrategy {};

// The least loaded rank with room, rotating among equals: one task or actor per rank first.
struct SpreadStrategy {};

// A rank of node `node` (weft::node() numbering). Hard (soft = false): there or nowhere; a node
// that does not exist or can never fit the request raises InfeasibleError at once, naming it.
// Soft: there when it has room now, else as DefaultStrategy (logged once per node).
struct NodeAffinity {
  int node = -1;
  bool soft = false;
};

using SchedulingStrategy = std::variant<DefaultStrategy, SpreadStrategy, NodeAffinity>;

}  // namespace weft
