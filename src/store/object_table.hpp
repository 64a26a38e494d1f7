// The node's object table, kept in the segment: a fixed array of entries, an open-addressing
// hash index (linear probing, backward-shift deletion, so no tombstones pile up) from ObjectId
// to entry, and two intrusive LRU lists (primaries and secondaries). Entries never move, so an
// index into the array stays valid while the entry lives; a generation number tells a reused
// slot from the one a view pinned. Not thread-safe: callers hold the segment lock.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/detail/ids.hpp"

namespace weft::store {

enum class ObjectState : uint8_t { kFree = 0, kCreating = 1, kSealed = 2 };
enum class Location : uint8_t { kNone = 0, kMemory = 1, kSpilled = 2, kFallback = 3 };

// Entry flags.
inline constexpr uint8_t kSpilling = 1;      // the I/O thread is writing its spill file
inline constexpr uint8_t kRestoring = 2;     // a reader is reading it back from its spill file
inline constexpr uint8_t kHasSpillCopy = 4;  // a valid spill file exists
inline constexpr uint8_t kDoomed = 8;        // removed while busy; freed when the work ends
inline constexpr uint8_t kInLru = 16;

struct Entry {
  ObjectId id;
  uint64_t size;
  uint64_t offset;      // payload offset from the segment base while loc == kMemory
  uint32_t generation;  // bumped on every reuse of the slot
  int32_t pins;         // live views and in-flight restores
  int32_t busy_pid;     // writer (kCreating) or spiller/restorer (flags) process
  int32_t lru_prev;     // towards more recently used, -1 = none
  int32_t lru_next;     // towards less recently used, -1 = none
  int32_t next_free;
  ObjectState state;
  Location loc;
  uint8_t primary;
  uint8_t flags;
  uint32_t pad;
};
static_assert(sizeof(Entry) == 64);  // one cache line

struct LruList {
  int32_t head;  // most recently used
  int32_t tail;  // least recently used
};

struct TableState {
  uint32_t max_entries;
  uint32_t index_slots;  // power of two, >= 2 * max_entries
  uint32_t count;
  int32_t free_head;
  LruList lru[2];  // [0] secondaries, [1] primaries
};

class ObjectTable {
 public:
  ObjectTable(TableState* st, Entry* entries, int32_t* index)
      : st_(st), entries_(entries), index_(index) {}

  static uint32_t index_slots_for(uint32_t max_entries);
  static void init(TableState* st, Entry* entries, int32_t* index, uint32_t max_entries);

  int32_t find(const ObjectId& id) const;  // -1 if absent
  int32_t insert(const ObjectId& id);      // new kCreating entry, or -1 if the table is full
  void erase(int32_t e);                   // unlinks it from the index and the LRU

  Entry& at(int32_t e) { return entries_[e]; }
  const Entry& at(int32_t e) const { return entries_[e]; }
  uint32_t count() const { return st_->count; }
  uint32_t capacity() const { return st_->max_entries; }

  void lru_push_front(int32_t e);  // into the list its `primary` flag selects
  void lru_remove(int32_t e);
  void lru_touch(int32_t e);
  int32_t lru_tail(bool primary) const { return st_->lru[primary ? 1 : 0].tail; }

  // Repair after a dead lock holder: rebuilds the index, the free list and the LRU lists from
  // the entries' own fields (LRU order is lost, which only costs eviction quality).
  void rebuild();

 private:
  uint32_t slot_of(const ObjectId& id) const;

  TableState* st_;
  Entry* entries_;
  int32_t* index_;
};

}  // namespace weft::store
