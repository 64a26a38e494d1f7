// The rank's table of live object states: id → the ObjectState all local refs to it share.
// Sharded, so user threads (creating and borrowing refs), worker threads and the event loop can
// use it at once without one hot lock. The table holds weak references: an entry lives exactly as
// long as some ref, pending task or pinned borrower keeps its state alive.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

#include "common/handoff_pool.hpp"
#include "common/open_hash_map.hpp"
#include "common/spin_lock.hpp"
#include "weft/detail/object_state.hpp"

namespace weft::core {

using detail::ObjectState;
using detail::StatePtr;

// A new state (not in any table). Its block comes from a HandoffPool: a result's state is made
// by the caller's thread and often dies on the loop's, or the other way round.
inline StatePtr new_state(const ObjectId& id) {
  return std::allocate_shared<ObjectState>(HandoffAllocator<ObjectState>(), id);
}

class ObjectTable {
 public:
  // A new entry; the id must not be live.
  void insert(const StatePtr& s);
  // The live state for `id`, or null.
  StatePtr find(const ObjectId& id);
  // The live state for `id`, created (pending) when absent; `*created` tells which.
  StatePtr find_or_create(const ObjectId& id, bool* created);
  // Called from ~ObjectState.
  void erase_expired(const ObjectId& id);
  // Keeps `s` alive until the job ends: refs serialized by hand, outside any Weft message, whose
  // readers nobody can count (ref_collector.cpp). Counted borrows live in the BorrowTable.
  void pin(const StatePtr& s);
  size_t size();
  size_t pinned();
  // The live states for which `pred` holds (a scan of every shard: for rare events only).
  template <class Pred>
  std::vector<StatePtr> collect(Pred pred) {
    std::vector<StatePtr> out, skipped;  // `skipped` dies after the locks: a last ref held here
    for (auto& sh : shards_) {           // would run ~ObjectState, which takes the shard lock
      std::lock_guard<SpinLock> g(sh.mu);
      sh.map.for_each([&](const ObjectId&, std::weak_ptr<ObjectState>& w) {
        if (StatePtr s = w.lock()) (pred(*s) ? out : skipped).push_back(std::move(s));
      });
    }
    return out;
  }

 private:
  static constexpr size_t kShards = 64;
  struct alignas(64) Shard {
    SpinLock mu;  // held for one hash-map operation
    // One array per shard (open_hash_map.hpp): an entry made and dropped per task costs no node
    // allocation and no pointer chase. The shard is the hash's low bits, the slot its high ones.
    OpenHashMap<ObjectId, std::weak_ptr<ObjectState>> map;
  };
  Shard& shard(const ObjectId& id) { return shards_[std::hash<ObjectId>{}(id) % kShards]; }
  std::array<Shard, kShards> shards_;
  std::mutex pin_mu_;
  std::vector<StatePtr> pinned_;
};

// Completion notification: every object completion bumps one per-process sequence; threads
// blocked in get/wait park on it with a futex only after a short spin, and only they pay for
// the wake-up (the completing thread skips the syscall when nobody waits).
class Completions {
 public:
  void notify();
  // Parks until the sequence moves past `seen` or `deadline`; spurious returns are fine.
  void park(uint32_t seen, std::chrono::steady_clock::time_point deadline);
  uint32_t seq() const { return seq_.load(std::memory_order_acquire); }

 private:
  std::atomic<uint32_t> seq_{0};
  std::atomic<int> waiters_{0};
};

// Marks `s` complete with a value or an error and wakes waiters. In loop turns only (whoever
// holds the loop's token, loop_turns.cpp, is the single writer of object states); put()
// completes its state before anyone else can see it.
void complete_ok(ObjectState& s, std::shared_ptr<const detail::Payload> p, Completions& c);
void complete_error(ObjectState& s, detail::ErrorInfo e, Completions& c);

}  // namespace weft::core
