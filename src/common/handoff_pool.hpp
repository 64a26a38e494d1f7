// HandoffPool: recycled memory blocks for objects that one thread allocates and another frees.
//
// A task's path hands objects between threads: the driver allocates a PendingCall and the command
// that carries it to the event loop, and the loop frees both; the loop allocates a pool job that
// a worker frees. glibc's per-thread cache keeps 7 blocks of a size and gives a freed block to the
// thread that freed it, so the allocating thread's cache is always empty and every such object
// went through malloc's locked slow paths: about 300 instructions per allocate and free in
// callgrind, a sixth of the submitting rank's instructions per task.
//
// Here a free pushes the block onto one lock-free stack per size class (a CAS), and an allocation
// takes from its own thread's list, which it refills by taking the whole shared stack at once
// (one exchange). Nothing removes from the shared stack but that whole-stack take, so the push
// needs no ABA guard. The shared stack keeps at most kKeep blocks, about kRecycledBytesPerList of
// them (roughly: a take moves the count, pushes race it); the rest go to operator delete.
// A thread's list is freed when it exits; the shared stacks are never destroyed, since blocks may
// be freed during exit.
//
// RecyclingAllocator (recycling_allocator.hpp) is the other shape: nodes that stay on one thread,
// with no atomic read-modify-write at all. Under AddressSanitizer nothing is recycled (WEFT_RECYCLE_NODES), so a
// use of a freed block is still caught.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <new>

#include "common/recycled_bytes.hpp"
#include "common/recycling_allocator.hpp"  // WEFT_RECYCLE_NODES

namespace weft {

template <size_t kBlock>
class HandoffPool {
 public:
  static constexpr size_t kKeep = recycled_blocks_kept(kBlock);
  static constexpr bool kRecycles = WEFT_RECYCLE_NODES != 0;
  // Each block is its own operator new allocation, aligned for any object that fits in it.
  static_assert(kBlock >= sizeof(void*) && kBlock % alignof(void*) == 0);

  static void* allocate() {
    if constexpr (kRecycles) {
      if (Local* l = local()) {
        if (!l->head) l->head = shared().take_all(&l->kept);
        if (Node* n = l->head) {
          l->head = n->next;
          l->kept.add(-static_cast<int64_t>(kBlock));
          return n;
        }
      }
    }
    return ::operator new(kBlock);
  }
  static void deallocate(void* p) noexcept {
    if constexpr (kRecycles) {
      if (shared().push(static_cast<Node*>(p))) return;
    }
    ::operator delete(p);
  }
  // Blocks waiting in the shared stack (approximate while other threads push; for tests).
  static size_t shared_count() { return static_cast<size_t>(shared().kept.get()) / kBlock; }

 private:
  struct Node {
    Node* next;
  };
  // Bytes kept are counted where they are (recycled_bytes.hpp): kBlock per push on the shared
  // stack's counter; a take moves the stack's count to the taker's list, whose pops subtract.
  // A push between a take's two exchanges is counted at the taker while its block waits on the
  // stack: the next taker's count comes out that much short, and the sum stays exact.
  struct Shared {
    std::atomic<Node*> head{nullptr};
    RecycledCounter kept;
    bool push(Node* n) {
      if (kept.get() >= static_cast<int64_t>(kKeep * kBlock)) return false;
      Node* h = head.load(std::memory_order_relaxed);
      do {
        n->next = h;
      } while (
          !head.compare_exchange_weak(h, n, std::memory_order_release, std::memory_order_relaxed));
      kept.add_shared(static_cast<int64_t>(kBlock));
      return true;
    }
    Node* take_all(RecycledCounter* to) {
      if (!head.load(std::memory_order_relaxed)) return nullptr;
      Node* h = head.exchange(nullptr, std::memory_order_acquire);
      to->add(kept.take());
      return h;
    }
  };
  struct Local {
    Node* head = nullptr;
    RecycledCounter kept;
    ~Local() {
      gone_ = true;
      while (Node* n = head) {
        head = n->next;
        ::operator delete(n);
      }
    }
  };
  static Shared& shared() {
    static Shared* s = new Shared;  // never destroyed: see above
    return *s;
  }
  // Null once this thread's list is destroyed (an allocation during thread exit).
  static Local* local() {
    if (gone_) return nullptr;
    thread_local Local l;
    return &l;
  }
  static inline thread_local bool gone_ = false;
};

// Size classes for objects of any size: 64 to 1024 bytes; larger ones use operator new. A block
// is the class's size whatever the object's, so the classes are close where the runtime's
// objects are: an ExecItem (304 bytes then, 192 now) took a 512-byte block when 256 and 512 were
// neighbours.
inline void* handoff_allocate(size_t n) {
  if (n <= 64) return HandoffPool<64>::allocate();
  if (n <= 128) return HandoffPool<128>::allocate();
  if (n <= 192) return HandoffPool<192>::allocate();
  if (n <= 256) return HandoffPool<256>::allocate();
  if (n <= 320) return HandoffPool<320>::allocate();
  if (n <= 384) return HandoffPool<384>::allocate();
  if (n <= 512) return HandoffPool<512>::allocate();
  if (n <= 768) return HandoffPool<768>::allocate();
  if (n <= 1024) return HandoffPool<1024>::allocate();
  return ::operator new(n);
}
inline void handoff_deallocate(void* p, size_t n) noexcept {
  if (n <= 64) return HandoffPool<64>::deallocate(p);
  if (n <= 128) return HandoffPool<128>::deallocate(p);
  if (n <= 192) return HandoffPool<192>::deallocate(p);
  if (n <= 256) return HandoffPool<256>::deallocate(p);
  if (n <= 320) return HandoffPool<320>::deallocate(p);
  if (n <= 384) return HandoffPool<384>::deallocate(p);
  if (n <= 512) return HandoffPool<512>::deallocate(p);
  if (n <= 768) return HandoffPool<768>::deallocate(p);
  if (n <= 1024) return HandoffPool<1024>::deallocate(p);
  ::operator delete(p);
}

// For a class whose objects are handed between threads: `struct X : HandoffAllocated {...}`. A
// class deleted through a base pointer needs a virtual destructor (then the size given to
// operator delete is the object's own).
struct HandoffAllocated {
  static void* operator new(size_t n) { return handoff_allocate(n); }
  static void operator delete(void* p, size_t n) noexcept { handoff_deallocate(p, n); }
};

// Recycled blocks as a standard allocator, for std::allocate_shared (an ObjectState and its
// control block in one block). The type's size is known here, so its blocks are a pool of their
// own, of that size rounded to 8 bytes: one per live ref, and a size class would round an
// ObjectState's 72 bytes up to 128 (ref_footprint.cpp). Arrays go to operator new.
template <class T>
class HandoffAllocator {
 public:
  using value_type = T;
  HandoffAllocator() = default;
  template <class U>
  HandoffAllocator(const HandoffAllocator<U>&) {}  // NOLINT(google-explicit-constructor)
  T* allocate(size_t n) {
    static_assert(alignof(T) <= alignof(std::max_align_t));
    return static_cast<T*>(n == 1 ? Pool::allocate() : ::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n == 1)
      Pool::deallocate(p);
    else
      ::operator delete(p);
  }
  template <class U>
  bool operator==(const HandoffAllocator<U>&) const {
    return true;
  }

 private:
  using Pool = HandoffPool<(sizeof(T) + 7) / 8 * 8>;
};

}  // namespace weft
