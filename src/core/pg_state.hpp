// One rank's placement-group state, held by its event loop: the submitter's cache of groups it
// targets (with calls parked until their group is created), snapshots that user threads read for
// pg.state()/wait(), and on rank 0 the head's PgManager. The bundles this rank hosts (the
// two-phase reservation's participant) are its gate's (exec_gate.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "head/pg_manager.hpp"
#include "sched/cluster_view.hpp"
#include "sched/placement_group.hpp"
#include "weft/detail/runtime_api.hpp"

namespace weft::core {

struct PendingCall;

// What a user thread may read about a group (copied under PgRankState::mu).
struct PgSnapshot {
  sched::PgState state = sched::PgState::kPending;
  std::string reason;
  std::vector<sched::BundleLocation> locations;
};

// The submitter's knowledge of one group, from the head's updates (loop thread only).
struct PgCacheEntry {
  bool known = false;       // an update arrived
  bool subscribed = false;  // kPgSubscribe sent (or this rank created the group)
  sched::PgState state = sched::PgState::kPending;
  std::string reason;
  std::vector<sched::ResourceSet> bundles;
  std::vector<sched::BundleLocation> locations;
  std::vector<sched::BundleLocation> held;  // taken out of the dispatch view while CREATED
  std::vector<std::unique_ptr<PendingCall>> parked;  // waiting for CREATED
  size_t next = 0;                                   // round robin for bundle_index -1
};

struct PgRankState {
  PgRankState(const std::vector<sched::RankInfo>& ranks, int rank);
  ~PgRankState();

  std::unordered_map<uint64_t, PgCacheEntry> cache;
  std::unique_ptr<head::PgManager> head;  // rank 0 only
  uint64_t next_seq = 1;                  // ids of groups created by this rank

  std::mutex mu;  // guards snapshots
  std::unordered_map<uint64_t, PgSnapshot> snapshots;
};

// The device ids a rank offers: its discovered devices when known, else 0..ceil(GPU)-1 (custom
// "GPU" amounts, e.g. WEFT_RESOURCES=GPU=4 on a machine without GPUs).
std::vector<int> rank_gpu_ids(const sched::RankInfo& info);

// Fills a call's placement from its options, or from the calling task's group when that task
// captures its children (pg_client.cpp). Any thread; never throws.
void set_placement(PendingCall& call, const detail::SubmitOptions& opts);

}  // namespace weft::core
