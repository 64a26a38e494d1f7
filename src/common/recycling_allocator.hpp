// RecyclingAllocator<T>: an allocator for node-based containers (std::unordered_map, std::map)
// on hot paths. A freed single node goes to a per-thread list of its type instead of back to
// malloc, and the next single-node allocation on that thread takes it from there.
//
// Why: a task's path inserts and erases a few map nodes (its in-flight record, its object's table
// entry). A burst of thousands of async tasks allocates thousands of nodes of one size before any
// is freed; glibc's per-thread cache keeps only 7 of a size, so the rest went through malloc's
// slow paths (`_int_malloc`, `_int_free`: about 200 instructions each in callgrind). A node freed
// on another thread than the one that allocated it lands in that thread's list: memory is
// memory. Each list keeps at most kKeep nodes, about kRecycledBytesPerList of them (the rest are
// freed), and a thread's lists are freed when it exits. Arrays (n > 1, a hash table's buckets) go
// straight to operator new.
// Under AddressSanitizer nothing is recycled, so that a use of a freed node is still caught.
#pragma once

#include <algorithm>
#include <cstddef>
#include <new>
#include <vector>

#include "common/recycled_bytes.hpp"

namespace weft {

#if defined(__SANITIZE_ADDRESS__)
#define WEFT_RECYCLE_NODES 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_RECYCLE_NODES 0
#endif
#endif
#ifndef WEFT_RECYCLE_NODES
#define WEFT_RECYCLE_NODES 1
#endif

// What one list of recycled blocks keeps at most (here and in handoff_pool.hpp), in bytes. Kept
// blocks count as the heap's bytes in use and stay resident: a list fills to its bound after the
// first burst larger than it and stays full for the life of its thread, so the bound is memory
// every rank holds. At 4,096 blocks a list, whatever the size, the soak's heap in use at idle
// was about 19 MiB larger on rank 0 and 4 MiB on its workers than with 64 (bench/soak/README.md).
// At 512 KiB a list still covers a burst of a thousand tasks (1,024 blocks of the 512-byte class
// of `PendingCall` and `ExecItem`); at 256 KiB such a burst costs 2.5 % more instructions.
inline constexpr size_t kRecycledBytesPerList = 512 << 10;

// The blocks of `block` bytes one list keeps: its byte budget, but never fewer than 64.
constexpr size_t recycled_blocks_kept(size_t block) {
  return std::max<size_t>(64, kRecycledBytesPerList / block);
}

template <class T>
class RecyclingAllocator {
 public:
  using value_type = T;
  static constexpr size_t kKeep = recycled_blocks_kept(sizeof(T));
  static constexpr bool kRecycles = WEFT_RECYCLE_NODES != 0;

  RecyclingAllocator() = default;
  template <class U>
  RecyclingAllocator(const RecyclingAllocator<U>&) {}  // NOLINT(google-explicit-constructor)

  T* allocate(size_t n) {
    if (List* l = kRecycles && n == 1 ? list() : nullptr; l && !l->nodes.empty()) {
      void* p = l->nodes.back();
      l->nodes.pop_back();
      l->kept.add(-static_cast<int64_t>(sizeof(T)));
      return static_cast<T*>(p);
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (List* l = kRecycles && n == 1 ? list() : nullptr; l && l->nodes.size() < kKeep) {
      try {
        l->nodes.push_back(p);
        l->kept.add(static_cast<int64_t>(sizeof(T)));
        return;
      } catch (...) {  // no room for the pointer: free the node instead
      }
    }
    ::operator delete(p);
  }
  // Nodes of this type kept for reuse on the calling thread (for tests).
  static size_t kept() {
    List* l = list();
    return l ? l->nodes.size() : 0;
  }

  template <class U>
  bool operator==(const RecyclingAllocator<U>&) const {
    return true;  // any instance frees what any other allocated
  }

 private:
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "RecyclingAllocator serves types of the default alignment only");
  struct List {
    std::vector<void*> nodes;
    RecycledCounter kept;  // bytes in `nodes`, for recycled_bytes()
    List() { nodes.reserve(64); }
    ~List() {
      gone_ = true;
      for (void* p : nodes) ::operator delete(p);
    }
  };
  // Null once this thread's list is destroyed: a container that outlives it (a static one, at
  // exit: a thread's thread-locals go before the statics) frees its nodes to operator delete.
  static List* list() {
    if (gone_) return nullptr;
    thread_local List l;
    return &l;
  }
  static inline thread_local bool gone_ = false;
};

}  // namespace weft
