#include "net/doorbell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace weft::net::detail {
namespace {

// Shared (not FUTEX_PRIVATE) operations: the word lives in memory mapped by several processes.
void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, std::chrono::microseconds t) {
  timespec ts;
  ts.tv_sec = t.count() / 1000000;
  ts.tv_nsec = (t.count() % 1000000) * 1000;
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

}  // namespace

void ring_doorbell(Doorbell& d) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (d.sleeping.load(std::memory_order_relaxed)) force_doorbell(d);
}

void force_doorbell(Doorbell& d) {
  d.seq.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(&d.seq);
}

uint32_t announce_sleep(Doorbell& d) {
  const uint32_t seen = d.seq.load(std::memory_order_acquire);
  d.sleeping.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return seen;
}

void sleep_on(Doorbell& d, uint32_t seen, std::chrono::microseconds timeout) {
  if (timeout.count() <= 0) return;
  futex_wait(&d.seq, seen, timeout);
}

void end_sleep(Doorbell& d) { d.sleeping.store(0, std::memory_order_relaxed); }

}  // namespace weft::net::detail
