#include "core/object_table.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace weft::core {

void ObjectTable::insert(const StatePtr& s) {
  Shard& sh = shard(s->id);
  std::lock_guard<SpinLock> g(sh.mu);
  sh.map.try_emplace(s->id) = s;
}

StatePtr ObjectTable::find(const ObjectId& id) {
  Shard& sh = shard(id);
  std::lock_guard<SpinLock> g(sh.mu);
  std::weak_ptr<ObjectState>* w = sh.map.find(id);
  return w ? w->lock() : nullptr;
}

StatePtr ObjectTable::find_or_create(const ObjectId& id, bool* created) {
  Shard& sh = shard(id);
  std::lock_guard<SpinLock> g(sh.mu);
  std::weak_ptr<ObjectState>& slot = sh.map.try_emplace(id);
  if (StatePtr s = slot.lock()) {
    *created = false;
    return s;
  }
  auto s = new_state(id);
  slot = s;
  *created = true;
  return s;
}

void ObjectTable::erase_expired(const ObjectId& id) {
  Shard& sh = shard(id);
  std::lock_guard<SpinLock> g(sh.mu);
  // A new state for the same id may already have replaced the dying one.
  sh.map.erase_if(id, [](const std::weak_ptr<ObjectState>& w) { return w.expired(); });
}

void ObjectTable::pin(const StatePtr& s) {
  std::lock_guard<std::mutex> g(pin_mu_);
  pinned_.push_back(s);
}

size_t ObjectTable::size() {
  size_t n = 0;
  for (auto& sh : shards_) {
    std::lock_guard<SpinLock> g(sh.mu);
    n += sh.map.size();
  }
  return n;
}

size_t ObjectTable::pinned() {
  std::lock_guard<std::mutex> g(pin_mu_);
  return pinned_.size();
}

void Completions::notify() {
  seq_.fetch_add(1, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) > 0) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&seq_), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr,
            nullptr, 0);
  }
}

void Completions::park(uint32_t seen, std::chrono::steady_clock::time_point deadline) {
  auto now = std::chrono::steady_clock::now();
  if (now >= deadline) return;
  auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
  // Bounded so that a lost wake-up (there should be none) costs at most this much.
  if (left > std::chrono::milliseconds(50)) left = std::chrono::milliseconds(50);
  timespec ts{static_cast<time_t>(left.count() / 1000000000), static_cast<long>(left.count() % 1000000000)};
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  if (seq_.load(std::memory_order_seq_cst) == seen) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&seq_), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
  }
  waiters_.fetch_sub(1, std::memory_order_seq_cst);
}

void complete_ok(ObjectState& s, std::shared_ptr<const detail::Payload> p, Completions& c) {
  if (s.done()) return;
  s.payload = std::move(p);
  s.status_.store(detail::ObjectStatus::kReady, std::memory_order_release);
  c.notify();
}

void complete_error(ObjectState& s, detail::ErrorInfo e, Completions& c) {
  if (s.done()) return;
  s.failure = std::make_unique<detail::ErrorInfo>(std::move(e));
  s.status_.store(detail::ObjectStatus::kFailed, std::memory_order_release);
  c.notify();
}

}  // namespace weft::core
