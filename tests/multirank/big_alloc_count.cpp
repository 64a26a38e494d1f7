// The global operator new of weft_large_result_tests, counting allocations of at least 32 MiB
// (large_result_test.cpp). In its own file so that the compiler never sees a `new` and the
// `free` of its block together.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {
constexpr size_t kBig = size_t(32) << 20;
std::atomic<uint64_t> g_big_allocs{0};
}  // namespace

uint64_t big_allocs() { return g_big_allocs.load(std::memory_order_relaxed); }

void* operator new(size_t n) {
  if (n >= kBig) g_big_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
