#include "store/robust_lock.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "common/check.hpp"
#include "common/log.hpp"

namespace weft::store {

void init_shared_sync(SharedSync* s) {
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
  int rc = pthread_mutex_init(&s->mutex, &ma);
  WEFT_CHECK(rc == 0) << "pthread_mutex_init: " << std::strerror(rc);
  pthread_mutexattr_destroy(&ma);

  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  rc = pthread_cond_init(&s->changed, &ca);
  WEFT_CHECK(rc == 0) << "pthread_cond_init: " << std::strerror(rc);
  pthread_condattr_destroy(&ca);
}

void destroy_shared_sync(SharedSync* s) {
  // Other ranks may still be mapped but must not be using the store any more; destroying is
  // only bookkeeping for the pthread implementation.
  pthread_cond_destroy(&s->changed);
  pthread_mutex_destroy(&s->mutex);
}

SegmentLock::SegmentLock(SharedSync* s, const std::function<void(int32_t)>& repair)
    : s_(s), repair_(repair) {
  lock();
}

SegmentLock::~SegmentLock() {
  if (held_) unlock();
}

void SegmentLock::lock() {
  WEFT_CHECK(!held_);
  after_acquire(pthread_mutex_lock(&s_->mutex));
}

void SegmentLock::after_acquire(int rc) {
  if (rc == EOWNERDEAD) {
    WEFT_LOG(Warn) << "object store: a process died holding the store lock; repairing metadata";
    held_ = true;
    const int32_t dead = s_->owner_pid;
    s_->owner_pid = ::getpid();
    if (repair_) repair_(dead);
    pthread_mutex_consistent(&s_->mutex);
    return;
  }
  WEFT_CHECK(rc == 0 || rc == ETIMEDOUT) << "store lock: " << std::strerror(rc);
  held_ = true;
  s_->owner_pid = ::getpid();
}

void SegmentLock::unlock() {
  WEFT_CHECK(held_);
  held_ = false;
  pthread_mutex_unlock(&s_->mutex);
}

void SegmentLock::wait_for(std::chrono::nanoseconds timeout, bool counted) {
  WEFT_CHECK(held_);
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const int64_t ns = ts.tv_nsec + timeout.count();
  ts.tv_sec += ns / 1000000000;
  ts.tv_nsec = ns % 1000000000;
  held_ = false;
  if (counted) ++s_->waiters;
  after_acquire(pthread_cond_timedwait(&s_->changed, &s_->mutex, &ts));
  if (counted && s_->waiters > 0) --s_->waiters;  // repair() may have reset it
}

void SegmentLock::notify_waiters() {
  if (s_->waiters > 0) pthread_cond_broadcast(&s_->changed);
}

void SegmentLock::notify_all() { pthread_cond_broadcast(&s_->changed); }

}  // namespace weft::store
