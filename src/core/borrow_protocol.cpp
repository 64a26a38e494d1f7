// The borrower protocol (borrow_protocol.hpp; docs/architecture.md, "Reference counting").
#include "core/borrow_protocol.hpp"

#include <algorithm>

#include "common/log.hpp"

namespace weft::core {
BorrowProtocol::BorrowProtocol(int rank, ObjectTable& objects, const FailedRanks& failed)
    : rank_(rank), objects_(objects), failed_(failed) {}

void BorrowProtocol::send(int dest, Msg type, std::vector<char> body, std::vector<StatePtr> refs,
                          MsgOutbox& out) {
  std::shared_ptr<Held> held;
  for (const auto& s : refs) {
    const int owner = s->id.owner;
    if (owner == rank_) {
      // Counted before the message exists; a failed receiver will never return the credit.
      if (!failed_.contains(dest)) borrows_.add(s, dest);
      continue;
    }
    if (failed_.contains(owner)) continue;  // its objects fate-share with it; nobody to count
    if (!held) held = std::make_shared<Held>();
    Batch& batch = batches_[batch_key(owner, dest)];
    if (batch.held.empty() || batch.held.back() != held) {
      batch.held.push_back(held);
      ++held->waiting;
    }
    batch.ids.push_back(s->id);
  }
  if (!held) {
    out.push_back(OutMsg{dest, type, std::move(body)});
    return;
  }
  held->dest = dest;
  held->type = type;
  held->body = std::move(body);
  held->refs = std::move(refs);
  ++held_count_;
}

void BorrowProtocol::release(HeldList& held, MsgOutbox& out) {
  for (auto& h : held) {
    if (--h->waiting > 0) continue;
    out.push_back(OutMsg{h->dest, h->type, std::move(h->body)});
    h->refs.clear();  // the receiver is counted: the sender's own credits may go
    --held_count_;
  }
  held.clear();
}

std::vector<StatePtr> BorrowProtocol::accept(const std::vector<ObjectId>& ids) {
  std::vector<StatePtr> states;
  states.reserve(ids.size());
  for (const auto& id : ids) {
    if (id.owner == rank_) {
      // Back at its owner: the carrier holds the state from here on, so the credit the sender
      // took for this message in flight goes back at once.
      StatePtr s = objects_.find(id);
      borrows_.release(id, rank_, 1);
      if (s) states.push_back(std::move(s));
      continue;
    }
    bool created = false;
    StatePtr s = objects_.find_or_create(id, &created);
    s->borrow_credits.fetch_add(1, std::memory_order_relaxed);
    states.push_back(std::move(s));
  }
  return states;
}

bool BorrowProtocol::queue_release(const ObjectId& id, uint32_t credits) {
  std::lock_guard<std::mutex> g(release_mu_);
  const bool first = releases_.empty();
  releases_.emplace_back(id, credits);
  has_releases_.store(true, std::memory_order_release);
  return first;
}

void BorrowProtocol::flush(MsgOutbox& out) {
  for (auto& [key, batch] : batches_) {
    const int owner = static_cast<int>(key >> 32);
    const int receiver = static_cast<int>(static_cast<uint32_t>(key));
    const uint64_t seq = batch_seq_++;
    serde::Buffer b;
    WireWriter w(b);
    w.put<uint64_t>(seq);
    w.put<int32_t>(receiver);
    w.put<uint32_t>(static_cast<uint32_t>(batch.ids.size()));
    for (const auto& id : batch.ids) w.put<ObjectId>(id);
    out.push_back(OutMsg{owner, Msg::kBorrowAdd, b.take()});
    awaiting_[seq] = Awaiting{owner, std::move(batch.held)};
  }
  batches_.clear();
  if (!has_releases_.load(std::memory_order_acquire)) return;
  std::vector<std::pair<ObjectId, uint32_t>> rel;
  {
    std::lock_guard<std::mutex> g(release_mu_);
    has_releases_.store(false, std::memory_order_relaxed);
    rel.swap(releases_);
  }
  std::stable_sort(rel.begin(), rel.end(),
                   [](const auto& a, const auto& b) { return a.first.owner < b.first.owner; });
  // One message per owner (in chunks, so a million dying refs stay a few messages).
  constexpr size_t kChunk = 1 << 16;
  for (size_t i = 0; i < rel.size();) {
    const int owner = rel[i].first.owner;
    size_t j = i;
    while (j < rel.size() && j - i < kChunk && rel[j].first.owner == owner) ++j;
    if (!failed_.contains(owner)) {  // a failed owner's objects are gone: nothing to release
      serde::Buffer b;
      WireWriter w(b);
      w.put<uint32_t>(static_cast<uint32_t>(j - i));
      for (size_t k = i; k < j; ++k) {
        w.put<ObjectId>(rel[k].first);
        w.put<uint32_t>(rel[k].second);
      }
      out.push_back(OutMsg{owner, Msg::kBorrowRelease, b.take()});
    }
    i = j;
  }
}

void BorrowProtocol::on_add(int src, const char* data, size_t len, MsgOutbox& out) {
  WireReader r(data, len);
  const auto seq = r.get<uint64_t>();
  const int receiver = r.get<int32_t>();
  // A receiver already known failed will never give the credit back (the message to it goes
  // nowhere): not counted.
  const bool counted = !failed_.contains(receiver);
  for (uint32_t n = r.get_count(sizeof(ObjectId), "kBorrowAdd"); n > 0; --n) {
    auto id = r.get<ObjectId>();
    if (StatePtr s = objects_.find(id)) {
      if (counted) borrows_.add(s, receiver);
    } else {  // the sender holds a credit for it, so this should not happen; the reader is lost
      WEFT_LOG(Warn) << "rank " << src << " lends " << id.str()
                     << ", which this owner no longer has";
    }
  }
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(seq);
  out.push_back(OutMsg{src, Msg::kBorrowAck, b.take()});
}

void BorrowProtocol::on_ack(const char* data, size_t len, MsgOutbox& out) {
  WireReader r(data, len);
  auto it = awaiting_.find(r.get<uint64_t>());
  if (it == awaiting_.end()) return;
  HeldList held = std::move(it->second.held);
  awaiting_.erase(it);
  release(held, out);
}

void BorrowProtocol::on_release(int src, const char* data, size_t len) {
  WireReader r(data, len);
  for (uint32_t n = r.get_count(sizeof(ObjectId) + sizeof(uint32_t), "kBorrowRelease"); n > 0;
       --n) {
    auto id = r.get<ObjectId>();
    borrows_.release(id, src, r.get<uint32_t>());
  }
}

uint64_t BorrowProtocol::peer_failed(int rank, MsgOutbox& out) {
  for (auto it = batches_.begin(); it != batches_.end();) {
    if (static_cast<int>(it->first >> 32) != rank) {
      ++it;
      continue;
    }
    HeldList held = std::move(it->second.held);
    it = batches_.erase(it);
    release(held, out);
  }
  for (auto it = awaiting_.begin(); it != awaiting_.end();) {
    if (it->second.owner != rank) {
      ++it;
      continue;
    }
    HeldList held = std::move(it->second.held);
    it = awaiting_.erase(it);
    release(held, out);
  }
  // Credits that rank held as a borrower will never come back: they go now, and what only it
  // borrowed is unpinned (freed once local refs are gone too). Messages still on their way to it
  // hold their credits under its rank as well, so they go too.
  return borrows_.drop_borrower(rank);
}

}  // namespace weft::core
