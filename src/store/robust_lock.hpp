// The segment's process-shared, robust mutex and its condition variable. Every rank of a node
// takes this lock to touch the store's metadata. If a holder dies, the next locker gets
// EOWNERDEAD: it runs the store's repair routine and marks the mutex consistent, so one crashed
// rank never wedges the node.
#pragma once

#include <pthread.h>

#include <chrono>
#include <functional>

namespace weft::store {

// Lives inside the shared segment; initialised once by the creating process.
struct SharedSync {
  pthread_mutex_t mutex;
  pthread_cond_t changed;  // broadcast whenever room is freed or an object changes state
  int32_t owner_pid;       // process holding the mutex (names the dead one on EOWNERDEAD)
  int32_t waiters;         // writers/readers in wait_for; a broadcast (a futex syscall, ~60 us
                           // in a sandbox) is skipped when nobody waits
};

void init_shared_sync(SharedSync* s);
void destroy_shared_sync(SharedSync* s);

// Scoped lock. `repair` runs with the lock held whenever the previous holder died, before the
// mutex is marked consistent again.
class SegmentLock {
 public:
  // `repair` receives the pid of the process that died holding the lock.
  SegmentLock(SharedSync* s, const std::function<void(int32_t)>& repair);
  ~SegmentLock();
  SegmentLock(const SegmentLock&) = delete;
  SegmentLock& operator=(const SegmentLock&) = delete;

  void unlock();
  void lock();
  // Waits for a broadcast on `changed` or until `timeout` passes (spurious wake-ups allowed:
  // callers re-check their condition).
  // `counted` = false for the spill thread, which polls anyway and must not make every
  // notify_waiters() pay for a broadcast.
  void wait_for(std::chrono::nanoseconds timeout, bool counted = true);
  // Wakes waiting writers and readers (and the spiller), if any writer or reader waits.
  void notify_waiters();
  // Wakes everyone, the spill thread included.
  void notify_all();

 private:
  void after_acquire(int rc);

  SharedSync* s_;
  const std::function<void(int32_t)>& repair_;
  bool held_ = false;
};

}  // namespace weft::store
