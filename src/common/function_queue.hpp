// FunctionQueue<R(Args...)>: a multi-producer, multi-consumer queue of MoveOnlyFunctions, used
// for the event loop's commands and the worker pool's jobs.
//
// Lock-free for real (boost::lockfree::queue: Michael-Scott with a node free list): a thread
// preempted in the middle of a push or pop never holds up another. oneTBB's concurrent_queue,
// used before, orders pushes and pops by ticket and spins (sched_yield) while a preempted holder
// of an earlier ticket finishes; on 2 oversubscribed cores that convoy was most of the system
// time of a same-rank task burst (strace: ~31,000 sched_yield for 20,000 tasks, ~5,800 after).
#pragma once

#include <atomic>
#include <boost/lockfree/queue.hpp>
#include <new>

#include "common/move_only_function.hpp"

namespace weft {

template <class Signature>
class FunctionQueue {
 public:
  using Function = MoveOnlyFunction<Signature>;

  FunctionQueue() : q_(kInitialNodes) { constructed_.store(true, std::memory_order_release); }
  ~FunctionQueue() { clear(); }
  FunctionQueue(const FunctionQueue&) = delete;
  FunctionQueue& operator=(const FunctionQueue&) = delete;

  void push(Function f) {
    (void)constructed_.load(std::memory_order_acquire);
    void* raw = f.release();
    // Not fixed-size: a push that finds no free node allocates one, and fails only when that
    // allocation does. The function is then destroyed (its captures do not leak) and bad_alloc
    // thrown, never a silent drop.
    if (!q_.push(raw)) {
      Function::adopt(raw);
      throw std::bad_alloc();
    }
  }
  bool try_pop(Function& out) {
    (void)constructed_.load(std::memory_order_acquire);
    void* raw = nullptr;
    if (!q_.pop(raw)) return false;
    out = Function::adopt(raw);
    return true;
  }
  // What never ran is destroyed with what it captured (a clean exit leaks nothing).
  void clear() {
    Function f;
    while (try_pop(f)) f = Function();
  }

 private:
  static constexpr size_t kInitialNodes = 256;  // 64-byte nodes; the free list grows past them
  boost::lockfree::queue<void*> q_;
  // The queue's construction happens before any use of it on another thread, but often only
  // through a hand-over ThreadSanitizer cannot see (oneTBB's enqueue, inside uninstrumented
  // libtbb): this release store and the acquire load in push/try_pop say it in Weft's code. An
  // acquire load costs nothing on x86.
  std::atomic<bool> constructed_{false};
};

}  // namespace weft
