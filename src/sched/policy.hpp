// Task and actor placement policies: which rank should run a request, seen from the rank that
// submits it. Every rank schedules locally first and sends elsewhere what does not fit.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sched/cluster_view.hpp"
#include "sched/resource_set.hpp"

namespace weft::sched {

enum class Policy { kDefault, kSpread, kNodeAffinity };

struct TaskRequest {
  ResourceSet need;
  Policy policy = Policy::kDefault;
  int node = -1;     // node id, for kNodeAffinity
  bool soft = true;  // kNodeAffinity: fall back to DEFAULT when the node has no room
  // Locality hint: ranks holding the request's arguments and how many bytes each holds.
  std::vector<std::pair<int, uint64_t>> arg_bytes_by_rank;
};

struct PickOptions {
  // DEFAULT packs onto ranks below this utilisation, then spreads (Ray's hybrid policy).
  double pack_threshold = 0.5;
};

// DEFAULT: the rank holding the most argument bytes, or another rank of its node, if one fits
// now (then the next holder's); else the local rank if it
// fits now; else the first rank (in rank order from local_rank, so a node's ranks come first)
// whose utilisation is below the threshold and which fits; else the least loaded rank that fits.
// SPREAD: the least loaded rank that fits (ties rotate from local_rank + 1).
// NODE_AFFINITY: a rank of that node that fits; when none has room, -1 if hard, DEFAULT if soft.
// Returns -1 when no rank has room right now (the caller queues the request); never a rank the
// request does not fit. Infeasibility is check_feasible's job, not this function's.
int pick_rank(const TaskRequest& req, const ClusterView& view, int local_rank,
              const PickOptions& opts = {});

}  // namespace weft::sched
