// The owner's side of reference counting: the borrow table, id → {the state it pins, credits
// given out per borrower rank}; and the wire form of the ref ids a message carries. The protocol
// that fills it is BorrowProtocol (borrow_protocol.hpp; docs/architecture.md, "Reference
// counting").
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/wire.hpp"
#include "weft/detail/object_state.hpp"

namespace weft::core {

using detail::StatePtr;

// The credits one borrowed object has out, per borrower rank: most objects have one or two
// borrowers, so two pairs live inline and only a wider fan-out allocates.
class BorrowerCredits {
 public:
  void add(int rank, uint32_t n);
  // Takes up to `n` of `rank`'s credits; returns how many it had to take.
  uint32_t take(int rank, uint32_t n);

 private:
  struct Credit {
    int32_t rank = -1;  // -1: a free inline slot
    uint32_t count = 0;
  };
  Credit* find(int rank);
  Credit inline_[2];
  std::unique_ptr<std::vector<Credit>> more_;  // from a third borrower on (one pointer until then)
};

// Owner side, loop thread only (the size mirrors are read by other threads).
class BorrowTable {
 public:
  // `n` more credits out for `s` (owned by this rank), held by `borrower`: pins it.
  void add(const StatePtr& s, int borrower, uint32_t n = 1);
  // `n` of `borrower`'s credits came back; at 0 in all the pin is dropped (the state dies when
  // local refs are gone).
  void release(const ObjectId& id, int borrower, uint32_t n);
  // `rank` died: its credits on every entry go. Returns how many credits it held.
  uint64_t drop_borrower(int rank);
  size_t size() const { return size_.load(std::memory_order_relaxed); }
  uint64_t total() const { return total_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    StatePtr pin;
    uint32_t count = 0;  // the sum over `credits`
    BorrowerCredits credits;
  };
  std::unordered_map<ObjectId, Entry> map_;
  std::atomic<size_t> size_{0};
  std::atomic<uint64_t> total_{0};
};

// The ids of the refs a message carries: u32 count, then the ids.
inline void put_ref_ids(WireWriter& w, const std::vector<StatePtr>& refs) {
  w.put<uint32_t>(static_cast<uint32_t>(refs.size()));
  for (const auto& s : refs) w.put<ObjectId>(s->id);
}
inline std::vector<ObjectId> get_ref_ids(WireReader& r) {
  uint32_t n = r.get<uint32_t>();
  std::vector<ObjectId> ids;
  ids.reserve(std::min<uint32_t>(n, 1u << 16));  // the reader checks every id against the bytes
  for (uint32_t i = 0; i < n; ++i) ids.push_back(r.get<ObjectId>());
  return ids;
}

}  // namespace weft::core
