// A per-rank wake-up word in the node's shared segment. A futex wake costs ~60 µs here against
// ~0.2 µs for a shared-memory message (NOTES.md), so writers make the system call only when the
// reader has announced it is about to sleep. The announce / recheck / sleep sequence on the
// reader side and publish / fence / check on the writer side (seq_cst fences on both) make a
// lost wake-up impossible: either the reader sees the new data in its recheck, or the writer
// sees `sleeping` and bumps `seq`, which makes the futex wait return at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace weft::net::detail {

struct alignas(64) Doorbell {
  std::atomic<uint32_t> seq;       // futex word: bumped by every wake
  std::atomic<uint32_t> sleeping;  // 1 while the owner is (about to be) parked
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// Writer side, after publishing data: wakes the owner only if it announced sleep.
void ring_doorbell(Doorbell& d);
// Unconditional wake (another thread of the owning process queued work).
void force_doorbell(Doorbell& d);

// Reader side. Usage: uint32_t s = announce_sleep(d); if (!recheck()) sleep_on(d, s, t);
// end_sleep(d);
uint32_t announce_sleep(Doorbell& d);
void sleep_on(Doorbell& d, uint32_t seen, std::chrono::microseconds timeout);
void end_sleep(Doorbell& d);

}  // namespace weft::net::detail
