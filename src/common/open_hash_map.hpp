// OpenHashMap<K, V>: a hash map stored in one array (open addressing, linear probing), for small
// keys looked up on every task: the object table's shards (core/object_table.hpp).
//
// Why: std::unordered_map keeps a node per entry and a bucket array beside it. An insert
// allocates a node and an erase frees one, and each lookup reduces the hash modulo a prime and
// follows a pointer: about 200 instructions per insert and per erase in callgrind, paid per task
// for its result's table entry. Here an entry is a slot of the array: finding it is one or two
// adjacent slots, and only growth allocates.
//
// - The capacity is a power of two, and the map is at most half full: it doubles past that, and
//   never shrinks (a burst's size is what the next burst needs again).
// - The slot index is the high bits of the hash times a 64-bit odd constant ("Fibonacci
//   hashing"): callers that pick a shard by the hash's low bits leave those bits equal in every
//   key of one map.
// - Erase moves later entries of the same probe run back into the gap (backward shift), so there
//   are no tombstones and lookups never slow down with churn.
// - A slot whose key is the value-initialised K{} is empty: that key is never stored (the object
//   table's ids start at owner 0; ObjectId{} is invalid). A flag beside the key would cost 8
//   bytes a slot with its padding, a fifth of the object table's slots (ref_footprint.cpp).
//
// Unlike a node-based map, an insert or an erase moves entries: a pointer or reference into the
// map is good only until its next change. Not thread-safe: its users lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "common/check.hpp"

namespace weft {

template <class K, class V, class Hash = std::hash<K>, class Eq = std::equal_to<K>>
class OpenHashMap {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return slots_.size(); }

  // The value for `k`, or null.
  V* find(const K& k) {
    if (size_ == 0) return nullptr;
    for (size_t i = home(k);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!used(s)) return nullptr;
      if (Eq{}(s.key, k)) return &s.value;
    }
  }

  // The value for `k`, value-initialised first when absent (`*inserted` tells which). `k` must
  // not be K{}, the empty slots' key.
  V& try_emplace(const K& k, bool* inserted = nullptr) {
    WEFT_CHECK(!Eq{}(k, K{})) << "OpenHashMap: the value-initialised key marks empty slots";
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t i = home(k);
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!used(s)) break;
      if (Eq{}(s.key, k)) {
        if (inserted) *inserted = false;
        return s.value;
      }
    }
    Slot& s = slots_[i];  // an unused slot holds a value-initialised V (erase_at resets it)
    s.key = k;
    ++size_;
    if (inserted) *inserted = true;
    return s.value;
  }

  // Erases the entry for `k` when there is one and `pred(value)` holds; true if it did.
  template <class Pred>
  bool erase_if(const K& k, Pred pred) {
    if (size_ == 0) return false;
    for (size_t i = home(k);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!used(s)) return false;
      if (Eq{}(s.key, k)) {
        if (!pred(s.value)) return false;
        erase_at(i);
        return true;
      }
    }
  }
  bool erase(const K& k) {
    return erase_if(k, [](const V&) { return true; });
  }

  // f(const K&, V&) for every entry, in no particular order; f must not change the map.
  template <class F>
  void for_each(F f) {
    for (Slot& s : slots_)
      if (used(s)) f(static_cast<const K&>(s.key), s.value);
  }

 private:
  struct Slot {
    K key{};  // K{}: empty
    V value{};
  };
  static bool used(const Slot& s) { return !Eq{}(s.key, K{}); }

  size_t home(const K& k) const {
    return static_cast<size_t>((uint64_t(Hash{}(k)) * 0x9e3779b97f4a7c15ull) >> shift_);
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t cap = old.empty() ? 16 : old.size() * 2;
    slots_ = std::vector<Slot>(cap);
    mask_ = cap - 1;
    shift_ = 64 - __builtin_ctzll(cap);
    for (Slot& o : old) {
      if (!used(o)) continue;
      size_t i = home(o.key);
      while (used(slots_[i])) i = (i + 1) & mask_;
      slots_[i].key = o.key;
      slots_[i].value = std::move(o.value);
    }
  }

  // Empties slot `hole` and moves back each later entry of its run whose home is not in the
  // cyclic range (hole, j]: those were probed past the hole and would no longer be found.
  void erase_at(size_t hole) {
    for (size_t j = (hole + 1) & mask_; used(slots_[j]); j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].key);
      const bool stays = hole < j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (stays) continue;
      slots_[hole].key = slots_[j].key;
      slots_[hole].value = std::move(slots_[j].value);
      hole = j;
    }
    slots_[hole].value = V();
    slots_[hole].key = K{};
    --size_;
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace weft
