// SpinLock: a lock for critical sections of a few hundred instructions that are almost never
// contended: a shard of the object table (64 of them), a thread's own timeline ring. Uncontended,
// a lock and an unlock are one exchange and one store, where a pthread mutex pair was about 55
// instructions, which the object table paid three times per task (callgrind, 2-rank async
// tasks, rank 0). A waiter spins briefly, then yields its core: on an oversubscribed node the
// holder it waits for may need that very core.
#pragma once

#include <immintrin.h>

#include <atomic>
#include <thread>

namespace weft {

class SpinLock {
 public:
  void lock() noexcept {
    while (held_.exchange(true, std::memory_order_acquire)) {
      for (int i = 0; held_.load(std::memory_order_relaxed); ++i) {
        if (i < 64)
          _mm_pause();
        else
          std::this_thread::yield();
      }
    }
  }
  bool try_lock() noexcept {
    return !held_.load(std::memory_order_relaxed) &&
           !held_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

}  // namespace weft
