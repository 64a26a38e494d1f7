// Counting replacements of the global operator new/delete (see alloc_counter.hpp). Counters are
// sharded per thread on separate cache lines: one shared atomic would make the runtime's loop
// thread and the driver contend on every allocation and slow the figures being measured.
#include "alloc_counter.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

constexpr int kShards = 64;
struct alignas(64) Shard {
  std::atomic<uint64_t> allocs{0}, bytes{0};
};
Shard g_shards[kShards];
std::atomic<int> g_next_shard{0};

inline void count(size_t n) {
  thread_local int shard = g_next_shard.fetch_add(1, std::memory_order_relaxed) % kShards;
  g_shards[shard].allocs.fetch_add(1, std::memory_order_relaxed);
  g_shards[shard].bytes.fetch_add(n, std::memory_order_relaxed);
}

void* counted(size_t n) {
  count(n);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}

void* counted_aligned(size_t n, std::align_val_t al) {
  count(n);
  const size_t a = static_cast<size_t>(al);
  // aligned_alloc wants a non-zero size that is a multiple of the alignment.
  const size_t rounded = n == 0 ? a : (n + a - 1) / a * a;
  if (void* p = std::aligned_alloc(a, rounded)) return p;
  throw std::bad_alloc();
}

}  // namespace

namespace weft::bench {
AllocCount alloc_count() {
  AllocCount c;
  for (const Shard& s : g_shards) {
    c.allocs += s.allocs.load(std::memory_order_relaxed);
    c.bytes += s.bytes.load(std::memory_order_relaxed);
  }
  return c;
}
}  // namespace weft::bench

void* operator new(size_t n) { return counted(n); }
void* operator new[](size_t n) { return counted(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  count(n);
  return std::malloc(n ? n : 1);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  count(n);
  return std::malloc(n ? n : 1);
}
void* operator new(size_t n, std::align_val_t a) { return counted_aligned(n, a); }
void* operator new[](size_t n, std::align_val_t a) { return counted_aligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
