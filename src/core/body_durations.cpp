#include "core/body_durations.hpp"

#include <algorithm>
#include <bit>

namespace weft::core {
namespace {

// Slots looked at from a key's home before it counts as absent: ids are hashes, so clusters
// stay short; a table this full of functions is past anything registered in practice.
constexpr size_t kProbes = 16;

uint64_t key_of(uint64_t fn_id) { return fn_id == 0 ? 1 : fn_id; }

size_t home(uint64_t key, size_t mask) {
  return static_cast<size_t>(key ^ (key >> 29)) & mask;  // ids are hashes already: mix a little
}

}  // namespace

BodyDurations::BodyDurations(size_t slots)
    : mask_(std::bit_ceil(std::max<size_t>(slots, 16)) - 1),
      slots_(std::make_unique<Slot[]>(mask_ + 1)) {}

const BodyDurations::Slot* BodyDurations::find(uint64_t key) const {
  for (size_t i = 0, at = home(key, mask_); i < kProbes; ++i, at = (at + 1) & mask_) {
    const uint64_t k = slots_[at].key.load(std::memory_order_acquire);
    if (k == key) return &slots_[at];
    if (k == 0) return nullptr;
  }
  return nullptr;
}

void BodyDurations::record(uint64_t fn_id, uint64_t ns) {
  const uint64_t key = key_of(fn_id);
  ns = std::min(ns, kUnknown - 1);
  for (size_t i = 0, at = home(key, mask_); i < kProbes; ++i, at = (at + 1) & mask_) {
    Slot& s = slots_[at];
    uint64_t k = s.key.load(std::memory_order_acquire);
    if (k == 0 && s.key.compare_exchange_strong(k, key, std::memory_order_acq_rel)) k = key;
    if (k != key) continue;  // another function's slot (or taken just now by another one)
    const uint64_t old = s.est_ns.load(std::memory_order_relaxed);
    s.est_ns.store(old == kUnknown ? ns : std::max(ns, old - old / 8), std::memory_order_relaxed);
    return;
  }
}

uint64_t BodyDurations::estimate_ns(uint64_t fn_id) const {
  const Slot* s = find(key_of(fn_id));
  return s ? s->est_ns.load(std::memory_order_relaxed) : kUnknown;
}

}  // namespace weft::core
