// Distributed reference counting: the borrower protocol (docs/architecture.md, "Reference
// counting").
//
//  * A blob that carries refs (task arguments, a result, a put value) lists them: collected at
//    serialization (detail::RefCollector), written as ids in front of the blob on the wire.
//  * Before such a message leaves for rank D, every ref's owner has counted one credit for it:
//    refs this rank owns are counted here at once; for the others, one kBorrowAdd per owner
//    per loop turn, and the message waits in the loop (never a thread) for the kBorrowAck.
//  * The receiver adds one credit per id to its own state of the object and keeps the states
//    with the carrier (the running task, the actor call, the outer object's state) until the
//    refs are deserialized. When the receiver is the owner itself, it returns the credit at once.
//  * A borrower's state that dies with credits queues kBorrowRelease(id, credits) to the owner;
//    the loop sends one batch per owner per turn.
//  * The owner pins a state while its count is above zero; at zero the pin goes, and the state
//    dies (freeing every store copy) once local refs are gone too.
//  * The owner knows whose credits it counts (kBorrowAdd names the receiver), so a borrower rank
//    that dies gives its credits back implicitly (refcount_peer_failed).
// Because the owner counts before the message exists, counts never go transiently negative.
#include "core/refcount.hpp"

#include <algorithm>

#include "common/log.hpp"
#include "core/event_loop.hpp"

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

void EventLoop::queue_release(const ObjectId& id, uint32_t credits) {
  bool first;
  {
    std::lock_guard<std::mutex> g(refcount_.release_mu);
    first = refcount_.releases.empty();
    refcount_.releases.emplace_back(id, credits);
    refcount_.has_releases.store(true, std::memory_order_release);
  }
  if (first && !stopped()) transport_.wake();
}

void EventLoop::add_contained(std::vector<StatePtr>& out, const ObjectState& s) {
  if (s.contained) out.insert(out.end(), s.contained->begin(), s.contained->end());
}

bool EventLoop::owner_gone(int rank) const {
  return rank >= 0 && static_cast<size_t>(rank) < refcount_dead_.size() && refcount_dead_[rank];
}

void EventLoop::send_with_refs(int dest, Msg type, serde::Buffer& b, std::vector<StatePtr> refs) {
  std::shared_ptr<HeldSend> held;
  for (const auto& s : refs) {
    const int owner = s->id.owner;
    if (owner == rank_) {
      // Counted before the message exists; a dead receiver will never return the credit.
      if (!owner_gone(dest)) refcount_.borrows.add(s, dest);
      continue;
    }
    if (owner_gone(owner)) continue;  // its objects fate-share with it; nobody to count
    if (!held) held = std::make_shared<HeldSend>();
    auto& out = refcount_.adds_out[RefcountState::add_key(owner, dest)];
    if (out.held.empty() || out.held.back() != held) {
      out.held.push_back(held);
      ++held->waiting;
    }
    out.ids.push_back(s->id);
  }
  if (!held) {
    send(dest, type, b);
    return;
  }
  held->dest = dest;
  held->type = type;
  held->body = b.take();
  held->refs = std::move(refs);
}

std::vector<StatePtr> EventLoop::accept_refs(const std::vector<ObjectId>& ids) {
  std::vector<StatePtr> out;
  out.reserve(ids.size());
  for (const auto& id : ids) {
    if (id.owner == rank_) {
      // Back at its owner: the carrier holds the state from here on, so the credit the sender
      // took for this message in flight goes back at once.
      StatePtr s = objects_.find(id);
      refcount_.borrows.release(id, rank_, 1);
      if (s) out.push_back(std::move(s));
      continue;
    }
    bool created = false;
    StatePtr s = objects_.find_or_create(id, &created);
    s->borrow_credits.fetch_add(1, std::memory_order_relaxed);
    out.push_back(std::move(s));
  }
  return out;
}

size_t EventLoop::flush_refcount() {
  size_t n = 0;
  if (!refcount_.adds_out.empty()) {
    for (auto& [key, out] : refcount_.adds_out) {
      const int owner = static_cast<int>(key >> 32);
      const int borrower = static_cast<int>(static_cast<uint32_t>(key));
      uint64_t batch = refcount_.batch_seq++;
      serde::Buffer b;
      WireWriter w(b);
      w.put<uint64_t>(batch);
      w.put<int32_t>(borrower);
      w.put<uint32_t>(static_cast<uint32_t>(out.ids.size()));
      for (const auto& id : out.ids) w.put<ObjectId>(id);
      send(owner, Msg::kBorrowAdd, b);
      refcount_.awaiting_ack[batch] = RefcountState::Awaiting{owner, std::move(out.held)};
      ++n;
    }
    refcount_.adds_out.clear();
  }
  if (!refcount_.has_releases.load(std::memory_order_acquire)) return n;
  std::vector<std::pair<ObjectId, uint32_t>> rel;
  {
    std::lock_guard<std::mutex> g(refcount_.release_mu);
    refcount_.has_releases.store(false, std::memory_order_relaxed);
    if (refcount_.releases.empty()) return n;
    rel.swap(refcount_.releases);
  }
  std::sort(rel.begin(), rel.end(),
            [](const auto& a, const auto& b) { return a.first.owner < b.first.owner; });
  // One message per owner (in chunks, so a million dying refs stay a few messages).
  constexpr size_t kChunk = 1 << 16;
  for (size_t i = 0; i < rel.size();) {
    const int owner = rel[i].first.owner;
    size_t j = i;
    while (j < rel.size() && j - i < kChunk && rel[j].first.owner == owner) ++j;
    if (!owner_gone(owner)) {  // a dead owner's objects are gone: nothing to release
      serde::Buffer b;
      WireWriter w(b);
      w.put<uint32_t>(static_cast<uint32_t>(j - i));
      for (size_t k = i; k < j; ++k) {
        w.put<ObjectId>(rel[k].first);
        w.put<uint32_t>(rel[k].second);
      }
      send(owner, Msg::kBorrowRelease, b);
      ++n;
    }
    i = j;
  }
  return n;
}

void EventLoop::handle_borrow_add(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto batch = r.get<uint64_t>();
  const int borrower = r.get<int32_t>();
  // A receiver already known dead will never give the credit back (the message to it goes
  // nowhere): not counted.
  const bool counted = !owner_gone(borrower);
  for (uint32_t n = r.get<uint32_t>(); n > 0; --n) {
    auto id = r.get<ObjectId>();
    if (StatePtr s = objects_.find(id)) {
      if (counted) refcount_.borrows.add(s, borrower);
    } else {  // the sender holds a credit for it, so this should not happen; the reader is lost
      WEFT_LOG(Warn) << "rank " << src << " lends " << id.str()
                     << ", which this owner no longer has";
    }
  }
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(batch);
  send(src, Msg::kBorrowAck, b);
}

void EventLoop::release_held(std::vector<std::shared_ptr<HeldSend>>& held) {
  for (auto& h : held) {
    if (--h->waiting > 0) continue;
    transport_.send(h->dest, static_cast<uint16_t>(h->type), h->body.data(), h->body.size());
    h->body = {};
    h->refs.clear();  // the receiver is counted: the sender's own credits may go
  }
  held.clear();
}

void EventLoop::handle_borrow_ack(const char* data, size_t len) {
  WireReader r(data, len);
  auto it = refcount_.awaiting_ack.find(r.get<uint64_t>());
  if (it == refcount_.awaiting_ack.end()) return;
  std::vector<std::shared_ptr<HeldSend>> held = std::move(it->second.held);
  refcount_.awaiting_ack.erase(it);
  release_held(held);
}

void EventLoop::handle_borrow_release(int src, const char* data, size_t len) {
  WireReader r(data, len);
  for (uint32_t n = r.get<uint32_t>(); n > 0; --n) {
    auto id = r.get<ObjectId>();
    refcount_.borrows.release(id, src, r.get<uint32_t>());
  }
}

std::vector<int> EventLoop::failed_ranks() const {
  std::vector<int> out;
  for (size_t r = 0; r < refcount_dead_.size(); ++r)
    if (refcount_dead_[r]) out.push_back(static_cast<int>(r));
  return out;
}

void EventLoop::refcount_peer_failed(int rank) {
  if (rank < 0 || rank >= size_) return;
  if (refcount_dead_.size() <= static_cast<size_t>(rank)) refcount_dead_.resize(rank + 1, 0);
  refcount_dead_[rank] = 1;
  // Messages waiting for that owner's ack go now: its objects fate-share with it, and the
  // receiver learns that when it reads them (OwnerDiedError), never by waiting here.
  for (auto it = refcount_.adds_out.begin(); it != refcount_.adds_out.end();) {
    if (static_cast<int>(it->first >> 32) != rank) {
      ++it;
      continue;
    }
    auto held = std::move(it->second.held);
    it = refcount_.adds_out.erase(it);
    release_held(held);
  }
  for (auto it = refcount_.awaiting_ack.begin(); it != refcount_.awaiting_ack.end();) {
    if (it->second.owner != rank) {
      ++it;
      continue;
    }
    auto held = std::move(it->second.held);
    it = refcount_.awaiting_ack.erase(it);
    release_held(held);
  }
  // Credits that rank held as a borrower will never come back: they go now, and what only it
  // borrowed is unpinned (freed once local refs are gone too). Messages still on their way to it
  // hold their credits under its rank as well, so they go too.
  const uint64_t dropped = refcount_.borrows.drop_borrower(rank);
  if (dropped > 0)
    WEFT_LOG(Info) << "dropped " << dropped << " borrow credits held by failed rank " << rank;
}

}  // namespace weft::core
