#include "common/recycled_bytes.hpp"

#include <mutex>

namespace weft {
namespace {

// The registry outlives every counter: counters of thread-local lists go at their threads' exit,
// and the shared stacks' at the process's, after the statics of this file would.
struct Registry {
  std::mutex mu;
  RecycledCounter* head = nullptr;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: see above
  return *r;
}

}  // namespace

RecycledCounter::RecycledCounter() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  next_ = r.head;
  if (next_) next_->prev_ = this;
  r.head = this;
}

RecycledCounter::~RecycledCounter() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  if (prev_)
    prev_->next_ = next_;
  else
    r.head = next_;
  if (next_) next_->prev_ = prev_;
}

size_t recycled_bytes() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  int64_t sum = 0;
  for (const RecycledCounter* c = r.head; c; c = c->next_) sum += c->get();
  return sum > 0 ? static_cast<size_t>(sum) : 0;
}

}  // namespace weft
