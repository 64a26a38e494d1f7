// One rank's placement-group state, held by its event loop: the ledger of the bundles this rank
// hosts (the two-phase reservation's participant), the submitter's cache of groups it targets
// (with calls parked until their group is created), snapshots that user threads read for
// pg.state()/wait(), and on rank 0 the head's PgManager.
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
#include "sched/pg_ledger.hpp"
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

// An actor whose creation targeted a group that was not CREATED yet: its creator returned the
// handle at once, without a rank (pg_actors.cpp). On the creator, the entry exists from the
// creation on and learns the rank or the failure; on another rank holding such a handle, it
// exists from the first call and is filled by the creator's kActorPlaced.
struct UnplacedActor {
  int rank = -1;                   // once placed
  bool failed = false;
  detail::ErrorInfo error;         // why it will never exist (when failed)
  bool asked = false;              // not the creator: kActorWhere sent
  struct Parked {
    std::unique_ptr<PendingCall> call;
    bool skip = false;             // only its place in the caller's order (it failed already)
  };
  std::vector<Parked> calls;       // in submission order, sent once the rank is known
  std::vector<int> waiters;        // creator: ranks that asked where it is
  bool kill = false;               // weft::kill before it was placed
};

// A bundle this rank hosts.
struct LocalBundle {
  sched::ResourceSet need;
  bool committed = false;
};

struct PgRankState {
  PgRankState(const std::vector<sched::RankInfo>& ranks, int rank);
  ~PgRankState();

  sched::PgLedger ledger;
  std::map<std::pair<uint64_t, int>, LocalBundle> local;
  bool tell_head_when_freed = false;  // a prepare was refused here: the head waits for room
  std::unordered_map<uint64_t, PgCacheEntry> cache;
  std::unordered_map<ActorId, UnplacedActor> unplaced;  // actors of groups not CREATED at creation
  std::unique_ptr<head::PgManager> head;  // rank 0 only
  uint64_t next_seq = 1;                  // ids of groups created by this rank

  std::mutex mu;  // guards snapshots
  std::unordered_map<uint64_t, PgSnapshot> snapshots;
};

// The device ids a rank offers: its discovered devices when known, else 0..ceil(GPU)-1 (custom
// "GPU" amounts, e.g. WEFT_RESOURCES=GPU=4 on a machine without GPUs).
std::vector<int> rank_gpu_ids(const sched::RankInfo& info);

// Actor creation in a group this rank does not know to be CREATED: registers the actor as
// unplaced and queues the creation, so the caller gets its handle (rank -1) at once. False (and
// nothing done) for other creations. Any thread (pg_actors.cpp).
class EventLoop;
bool submit_unplaced_actor(EventLoop& l, PendingCall* call);

// Fills a call's placement from its options, or from the calling task's group when that task
// captures its children (pg_client.cpp). Any thread; never throws.
void set_placement(PendingCall& call, const detail::SubmitOptions& opts);

}  // namespace weft::core
