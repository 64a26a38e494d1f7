#include "core/inline_budget.hpp"

#include <cstring>
#include <new>

#include "core/object_store_client.hpp"
#include "weft/errors.hpp"

namespace weft::core {

bool InlineBudget::try_acquire(size_t bytes) {
  if (bytes == 0) return true;
  const size_t lim = limit();
  size_t cur = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > lim || cur > lim - bytes) return false;
  } while (!used_.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  const size_t now = cur + bytes;
  size_t p = peak_.load(std::memory_order_relaxed);
  while (now > p && !peak_.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
  }
  return true;
}

BudgetedPayload::BudgetedPayload(std::vector<char> bytes) : size_(bytes.size()) {
  if (size_ <= kInPlace) {
    if (size_) std::memcpy(in_place_, bytes.data(), size_);
  } else {
    new (&heap_) std::vector<char>(std::move(bytes));
  }
}

BudgetedPayload::~BudgetedPayload() {
  if (size_ > kInPlace) heap_.~vector();
  inline_budget().release(InlineBudget::charge(size_));
}

InlineBudget& inline_budget() {
  static InlineBudget b;
  return b;
}

size_t inline_owner_limit(const Config& cfg) {
  const int64_t v = cfg.get_bytes("inline_owner_limit", int64_t{256} << 20);
  if (v < 0)
    throw ConfigError("inline_owner_limit (WEFT_INLINE_OWNER_LIMIT) must be 0 or more bytes, got " +
                      std::to_string(v));
  return static_cast<size_t>(v);
}

std::shared_ptr<const detail::Payload> owned_payload(const ObjectId& id, std::vector<char> bytes,
                                                     bool may_wait) {
  if (bytes.empty()) {
    // A void task's result, say: nothing to hold or charge, so every such object shares one
    // payload instead of a heap allocation each (freed on another thread, often).
    static const std::shared_ptr<const detail::Payload> empty =
        std::make_shared<detail::InlinePayload>(std::vector<char>());
    return empty;
  }
  ObjectStoreClient* c = store_client();
  if (!c) return std::make_shared<detail::InlinePayload>(std::move(bytes));
  const size_t charge = InlineBudget::charge(bytes.size());
  if (inline_budget().try_acquire(charge)) {
    try {
      return std::make_shared<BudgetedPayload>(std::move(bytes));
    } catch (...) {
      inline_budget().release(charge);  // nothing was made: give back
      throw;
    }
  }
  inline_budget().count_moved();
  return c->put_primary(
      id, bytes.size(),
      [](char* dst, const void* v) {
        const auto& b = *static_cast<const std::vector<char>*>(v);
        if (!b.empty()) std::memcpy(dst, b.data(), b.size());
      },
      &bytes, may_wait);
}

std::shared_ptr<const detail::Payload> owned_payload(const ObjectId& id, size_t size,
                                                     void (*fill)(char*, const void*),
                                                     const void* ctx) {
  ObjectStoreClient* c = store_client();
  if (c && !inline_budget().try_acquire(InlineBudget::charge(size))) {
    inline_budget().count_moved();
    return c->put_primary(id, size, fill, ctx);
  }
  try {
    std::vector<char> bytes(size);
    if (size) fill(bytes.data(), ctx);
    if (!c) return std::make_shared<detail::InlinePayload>(std::move(bytes));
    return std::make_shared<BudgetedPayload>(std::move(bytes));
  } catch (...) {
    if (c) inline_budget().release(InlineBudget::charge(size));  // nothing was made: give back
    throw;
  }
}

}  // namespace weft::core
