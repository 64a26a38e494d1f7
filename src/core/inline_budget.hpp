// The per-owner limit on inline values (DESIGN §4, issue #3). Values up to inline_threshold live
// in their owner's heap, inside the ObjectState; without a bound, a driver that holds a million
// small results grows until the kernel kills it (Ray's driver OOM). Every inline value this rank
// owns is charged to one per-rank budget while it lives; a value that would push the budget past
// `inline_owner_limit` is written to the node store instead, where memory is bounded and can
// spill to disk. Values a borrower caches (copies of other owners' objects) are not charged.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/config.hpp"
#include "weft/detail/object_state.hpp"

namespace weft::core {

class InlineBudget {
 public:
  // What one inline value costs the budget: its bytes plus a fixed estimate of its payload
  // holder's heap (object, control block, allocator headers). Values under kChargedFrom bytes
  // are free and never moved: the owner's record of a value in the store (a StorePayload) takes
  // more heap than they do (bench/core/ref_footprint.cpp), so moving them would not bound
  // anything; their cost is the ref's control state, which no payload policy changes.
  static constexpr size_t kOverheadBytes = 64;
  static constexpr size_t kChargedFrom = 256;
  static size_t charge(size_t value_bytes) {
    return value_bytes < kChargedFrom ? 0 : value_bytes + kOverheadBytes;
  }

  void set_limit(size_t bytes) { limit_.store(bytes, std::memory_order_relaxed); }
  size_t limit() const { return limit_.load(std::memory_order_relaxed); }
  // Charges `bytes` if the total stays within the limit. Any thread; lock-free.
  bool try_acquire(size_t bytes);
  void release(size_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  void count_moved() { moved_.fetch_add(1, std::memory_order_relaxed); }

  size_t used() const { return used_.load(std::memory_order_relaxed); }
  size_t peak() const { return peak_.load(std::memory_order_relaxed); }
  uint64_t moved_to_store() const { return moved_.load(std::memory_order_relaxed); }

 private:
  std::atomic<size_t> limit_{size_t{256} << 20};
  std::atomic<size_t> used_{0};
  std::atomic<size_t> peak_{0};
  std::atomic<uint64_t> moved_{0};
};

// The budget of this process (one rank).
InlineBudget& inline_budget();

// `inline_owner_limit` (WEFT_INLINE_OWNER_LIMIT, --weft-inline-owner-limit): default 256 MiB.
// Throws ConfigError for a negative value. 0 sends every owned value to the store.
size_t inline_owner_limit(const Config& cfg);

// An inline value owned by this rank, charged to the budget until it dies. Values of up to
// kInPlace bytes (an int, a double, a small struct: most task results) live inside the object,
// saving the vector's separate allocation (32 B of heap per ref, bench/core/ref_footprint.cpp).
class BudgetedPayload final : public detail::Payload {
 public:
  static constexpr size_t kInPlace = sizeof(std::vector<char>);
  explicit BudgetedPayload(std::vector<char> bytes);
  ~BudgetedPayload() override;
  BudgetedPayload(const BudgetedPayload&) = delete;
  BudgetedPayload& operator=(const BudgetedPayload&) = delete;
  const char* data() const override { return size_ <= kInPlace ? in_place_ : heap_.data(); }
  size_t size() const override { return size_; }

 private:
  size_t size_;
  union {
    char in_place_[kInPlace];
    std::vector<char> heap_;
  };
};

// The payload of a small value this rank owns: inline (charged) while the budget allows, else a
// primary in this node's store. Without a store (none started) the value stays inline.
// Throws ObjectStoreFullError / SpillError when the store cannot take it either. `may_wait`
// false (the event loop): the store's room there is now, else a fallback file, never a wait.
std::shared_ptr<const detail::Payload> owned_payload(const ObjectId& id, std::vector<char> bytes,
                                                     bool may_wait = true);
// The same for a value written by `fill` (put of a value whose encoded size is known).
std::shared_ptr<const detail::Payload> owned_payload(const ObjectId& id, size_t size,
                                                     void (*fill)(char*, const void*),
                                                     const void* ctx);

}  // namespace weft::core
