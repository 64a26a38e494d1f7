// The owner's borrow table: credits per borrower rank, and the pin they keep.
#include "core/borrow_table.hpp"

#include <algorithm>

#include "common/log.hpp"

namespace weft::core {

BorrowerCredits::Credit* BorrowerCredits::find(int rank) {
  for (auto& c : inline_)
    if (c.rank == rank) return &c;
  if (more_)
    for (auto& c : *more_)
      if (c.rank == rank) return &c;
  return nullptr;
}

void BorrowerCredits::add(int rank, uint32_t n) {
  if (Credit* c = find(rank)) {
    c->count += n;
    return;
  }
  for (auto& c : inline_)
    if (c.rank < 0) {
      c = {rank, n};
      return;
    }
  if (!more_) more_ = std::make_unique<std::vector<Credit>>();
  more_->push_back({rank, n});
}

uint32_t BorrowerCredits::take(int rank, uint32_t n) {
  Credit* c = find(rank);
  if (!c) return 0;
  uint32_t k = std::min(n, c->count);
  c->count -= k;
  if (c->count > 0) return k;
  if (c == &inline_[0] || c == &inline_[1]) {
    *c = {};
  } else {
    *c = more_->back();
    more_->pop_back();
    if (more_->empty()) more_.reset();
  }
  return k;
}

void BorrowTable::add(const StatePtr& s, int borrower, uint32_t n) {
  auto [it, fresh] = map_.try_emplace(s->id);
  if (fresh) {
    it->second.pin = s;
    size_.store(map_.size(), std::memory_order_relaxed);
  }
  it->second.count += n;
  it->second.credits.add(borrower, n);
  total_.fetch_add(n, std::memory_order_relaxed);
}

void BorrowTable::release(const ObjectId& id, int borrower, uint32_t n) {
  auto it = map_.find(id);
  if (it == map_.end()) {
    WEFT_LOG(Debug) << "a release for " << id.str() << ", which has no borrowers";
    return;
  }
  uint32_t k = it->second.credits.take(borrower, n);
  if (k < n)
    WEFT_LOG(Debug) << "rank " << borrower << " releases " << n << " credits for " << id.str()
                    << " but holds " << k;
  it->second.count -= k;
  total_.fetch_sub(k, std::memory_order_relaxed);
  if (it->second.count > 0) return;
  StatePtr pin = std::move(it->second.pin);
  map_.erase(it);
  size_.store(map_.size(), std::memory_order_relaxed);
  // `pin` goes last, with the table consistent: the state may die here and free its copies.
}

uint64_t BorrowTable::drop_borrower(int rank) {
  uint64_t dropped = 0;
  std::vector<StatePtr> unpinned;  // die after the walk, with the table consistent
  for (auto it = map_.begin(); it != map_.end();) {
    uint32_t k = it->second.credits.take(rank, UINT32_MAX);
    if (k == 0) {
      ++it;
      continue;
    }
    dropped += k;
    it->second.count -= k;
    if (it->second.count > 0) {
      ++it;
      continue;
    }
    unpinned.push_back(std::move(it->second.pin));
    it = map_.erase(it);
  }
  total_.fetch_sub(dropped, std::memory_order_relaxed);
  size_.store(map_.size(), std::memory_order_relaxed);
  return dropped;
}

}  // namespace weft::core
