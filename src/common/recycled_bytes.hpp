// recycled_bytes(): the bytes that the recycled-block lists (HandoffPool, RecyclingAllocator) hold,
// over every thread of the process.
//
// Why: a kept block counts in malloc's bytes in use and stays resident, yet serves no object. A
// list fills after the first burst that overflows it and stays full, so the heap in use of a
// rank that runs the same work again moves with which lists happen to be full (by up to 1.8 MiB
// between two idle moments of the one-minute soak). A leak check subtracts this figure
// (bench/soak).
//
// Each list owns a RecycledCounter that only its thread writes: a relaxed load and store, no
// read-modify-write, on the paths that keep or take a block. Readers sum every live counter
// under the registry's lock, so the figure is exact for a quiet process and approximate while
// lists change.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft {

class RecycledCounter {
 public:
  RecycledCounter();   // joins the registry
  ~RecycledCounter();  // leaves it
  RecycledCounter(const RecycledCounter&) = delete;
  RecycledCounter& operator=(const RecycledCounter&) = delete;

  // By the owning thread only (or under a protocol that gives one writer at a time).
  void add(int64_t bytes) {
    bytes_.store(bytes_.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
  }
  // Any thread may add through this one (an atomic read-modify-write).
  void add_shared(int64_t bytes) { bytes_.fetch_add(bytes, std::memory_order_relaxed); }
  int64_t get() const { return bytes_.load(std::memory_order_relaxed); }
  // Empties this counter and returns what it held (an atomic exchange).
  int64_t take() { return bytes_.exchange(0, std::memory_order_relaxed); }

 private:
  friend size_t recycled_bytes();
  std::atomic<int64_t> bytes_{0};
  RecycledCounter* prev_ = nullptr;
  RecycledCounter* next_ = nullptr;
};

// The sum over every list alive now, in bytes.
size_t recycled_bytes();

}  // namespace weft
