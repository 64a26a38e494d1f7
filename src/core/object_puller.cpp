// Object transfer between nodes: the pull protocol (object_puller.hpp).
#include "core/object_puller.hpp"

#include <cstring>

#include "common/log.hpp"
#include "core/object_store_client.hpp"
#include "core/wire.hpp"

namespace weft::core {
namespace {

enum class PullMode : uint8_t { kError = 0, kSegment = 1, kBytes = 2 };

detail::ErrorInfo pull_error(detail::ErrorKind kind, int rank, const std::string& msg) {
  detail::ErrorInfo e;
  e.kind = kind;
  e.rank = rank;
  e.message = msg;
  return e;
}

std::vector<char> id_body(const ObjectId& id) {
  serde::Buffer b;
  WireWriter w(b);
  w.put<ObjectId>(id);
  return b.take();
}

}  // namespace

detail::ErrorInfo lost_error(int rank, const std::string& msg) {
  return pull_error(detail::ErrorKind::kObjectLost, rank, msg);
}

ObjectPuller::ObjectPuller(const net::Topology& topo, store::NodeStore* store,
                           const FailedRanks* failed)
    : topo_(topo), store_(store), failed_(failed) {}

int ObjectPuller::fallback_holder(const ObjectId& id, int holder) const {
  const int owner = id.owner;
  if (owner == holder || owner == topo_.rank || failed(owner)) return -1;
  return owner;
}

void ObjectPuller::request(const ObjectId& id, int holder, Outbox& out) {
  out.msgs.push_back(OutMsg{holder, Msg::kPullRequest, id_body(id)});
}

void ObjectPuller::pull(const ObjectId& id, int holder, size_t size, bool owner_record,
                        PulledFn done, Outbox& out) {
  if (!store_) {
    done(nullptr, lost_error(topo_.rank, "no object store on rank " + std::to_string(topo_.rank)));
    return;
  }
  if (topo_.same_node(holder)) {  // same segment: nothing to copy, ever
    done(std::make_shared<StorePayload>(id, holder, size, owner_record, std::nullopt), {});
    return;
  }
  if (failed(holder)) {  // a location given before its holder failed
    const int other = fallback_holder(id, holder);
    if (other < 0) {
      done(nullptr, lost_error(topo_.rank, id.str() + " was on rank " + std::to_string(holder) +
                                               ", which has failed, and no other rank holds it"));
      return;
    }
    holder = other;
  }
  std::optional<store::ObjectView> v;
  try {
    v = store_->get(id);
  } catch (const std::exception& e) {  // a copy here that cannot be read (its fallback file)
    done(nullptr, pull_error(detail::ErrorKind::kGeneric, topo_.rank,
                             "reading " + id.str() + " from the object store of node " +
                                 std::to_string(topo_.node) + " failed: " + e.what()));
    return;
  }
  if (v) {  // another rank of this node pulled it already
    done(std::make_shared<StorePayload>(id, holder, size, owner_record, std::move(v)), {});
    return;
  }
  Pull& p = pulls_[id];
  p.waiters.push_back({owner_record, std::move(done)});
  if (p.waiters.size() > 1) return;
  p.holder = holder;
  p.size = size;
  p.requests = 1;
  request(id, holder, out);
}

// The new copy sealed, pinned for the waiters. Mapping a sealed fallback copy for its view can
// fail (its file is gone); the waiters then each read it with get() in finish, which reports why.
std::optional<store::ObjectView> ObjectPuller::seal_for_waiters(store::WritableObject& copy) {
  try {
    return copy.seal_pinned();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void ObjectPuller::finish(const ObjectId& id, const std::string& error,
                          std::optional<store::ObjectView> sealed) {
  auto it = pulls_.find(id);
  if (it == pulls_.end()) return;
  // `sealed` (this rank's new copy, pinned at its seal) keeps the copy in the store until every
  // waiter has its own view: another thread making room would evict it otherwise, unpinned
  // between the seal and the reads below (multirank_spill_scale saw "vanished" once).
  Pull pull = std::move(it->second);
  pulls_.erase(it);  // before the waiters run: they may pull again
  for (auto& w : pull.waiters) {
    std::optional<store::ObjectView> v;
    std::string why = error;
    if (why.empty()) {
      try {
        v = store_->get(id);
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (!v && why.empty()) why = "the copy vanished from this node's store";
    }
    if (v) {
      w.done(
          std::make_shared<StorePayload>(id, pull.holder, pull.size, w.owner_record, std::move(v)),
          {});
      continue;
    }
    w.done(nullptr, pull_error(pull.error_kind, topo_.rank,
                               "pulling " + id.str() + " (" + std::to_string(pull.size) +
                                   " bytes) from rank " + std::to_string(pull.holder) +
                                   " on node " + std::to_string(topo_.node_of_rank[pull.holder]) +
                                   " to rank " + std::to_string(topo_.rank) + " on node " +
                                   std::to_string(topo_.node) + " failed: " + why));
  }
}

void ObjectPuller::on_reply(int src, const char* data, size_t len, Outbox& out) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  auto mode = static_cast<PullMode>(r.get<uint8_t>());
  auto it = pulls_.find(id);
  if (it == pulls_.end() || it->second.holder != src) return;  // failed or answered already
  if (mode == PullMode::kError) return finish(id, r.get_str());
  if (mode != PullMode::kSegment && mode != PullMode::kBytes)
    throw SerializationError("kPullReply: unknown mode " + std::to_string(int(mode)));
  HeldReply reply;
  reply.src = src;
  reply.segment = mode == PullMode::kSegment;
  if (reply.segment) {
    reply.offset = r.get<uint64_t>();
    reply.size = r.get<uint64_t>();
  } else {
    auto [p, n] = r.rest();
    reply.bytes.assign(p, p + n);
    reply.size = n;
  }
  reply.room_deadline_ns = store::monotonic_ns() + store_->alloc_timeout_ns();
  make_copy(id, it->second, std::move(reply), out);
}

void ObjectPuller::make_copy(const ObjectId& id, Pull& pull, HeldReply reply, Outbox& out) {
  // The holder unpins once this node has its copy, or will never make one.
  auto done_with_holder = [&] {
    if (reply.segment) out.msgs.push_back(OutMsg{reply.src, Msg::kPullDone, id_body(id)});
  };
  std::optional<store::CreateResult> made;
  try {
    // Never waits: this runs on the event loop, whose turns carry the heartbeats. No room yet
    // while spilling can make some: the reply is held and tried again from later turns
    // (retry_room), until alloc_timeout, after which the store gives a fallback file.
    made.emplace(store_->try_create(id, reply.size, /*primary=*/false, reply.room_deadline_ns));
  } catch (const std::exception& e) {
    // A real failure (full, a fallback file that cannot be made): no copy is coming from
    // anywhere, so the waiters learn it now.
    done_with_holder();
    pull.error_kind = dynamic_cast<const ObjectStoreFullError*>(&e) ? detail::ErrorKind::kStoreFull
                                                                    : detail::ErrorKind::kGeneric;
    return finish(id, std::string("no copy can be made in this node's object store: ") + e.what());
  }
  if (made->status() == store::CreateStatus::kNoRoomYet) {
    pull.room = std::move(reply);
    if (!room_next_) room_next_ = Clock::now() + kRoomRetry;
    return;
  }
  pull.room.reset();
  if (!made->created()) {
    // Another rank of this node made (kExists) or is making (kInProgress) the same copy.
    done_with_holder();
    pull.copy_deadline = Clock::now() + kCopyWait;
    return await_copy(id, pull, Clock::now(), out);
  }
  auto copy = std::make_shared<store::WritableObject>(std::move(made->object()));
  if (!reply.segment) {
    if (reply.size) std::memcpy(copy->data().data(), reply.bytes.data(), reply.size);
    return finish(id, "", seal_for_waiters(*copy));
  }
  out.reads.push_back(Read{id, reply.src, reply.offset, reply.size, std::move(copy)});
}

void ObjectPuller::on_read_done(const Read& r, bool ok, const std::string& error, Outbox& out) {
  if (!failed(r.holder)) out.msgs.push_back(OutMsg{r.holder, Msg::kPullDone, id_body(r.id)});
  if (ok)  // the bytes are whole, whoever the pull asks now
    return finish(r.id, "", seal_for_waiters(*r.copy));
  auto it = pulls_.find(r.id);
  // A read from a holder that failed while this pull moved on to the owner: its unsealed copy
  // goes with `r`, and the new request waits for that (await_copy).
  if (it != pulls_.end() && it->second.holder != r.holder) return;
  finish(r.id, "RMA read failed: " + error);
}

void ObjectPuller::await_copy(const ObjectId& id, Pull& pull, Clock::time_point now, Outbox& out) {
  switch (store_->presence(id)) {
    case store::Presence::kSealed:
      return finish(id, "");  // each waiter gets (and pins) it there
    case store::Presence::kAbsent:
    case store::Presence::kAbandoned:
      // The other rank gave its copy up (its own pull failed, or it was evicted already) or
      // died writing it (create() reclaims what it left): ask the holder again, so this pull
      // does not inherit a failure that was not its own.
      pull.copy_deadline.reset();
      if (pull.requests >= kMaxRequests)
        return finish(id, "other ranks of this node took over the copy " +
                              std::to_string(pull.requests) + " times and gave it up each time");
      ++pull.requests;
      return request(id, pull.holder, out);
    case store::Presence::kRemoving:
      pull.error_kind = detail::ErrorKind::kGeneric;
      return finish(id, "its owner freed it while the copy on this node was still open");
    case store::Presence::kWriting:
      break;
  }
  if (now > *pull.copy_deadline)
    return finish(id, "another rank of this node has been writing the copy for " +
                          std::to_string(kCopyWait.count()) + " s without finishing it");
  // Rare (two ranks of one node pulling the same object at once) and short: looked at again on
  // the loop's next round instead of blocking it.
  out.recheck = true;
}

void ObjectPuller::recheck(Clock::time_point now, Outbox& out) {
  std::vector<ObjectId> waiting;
  for (const auto& [id, p] : pulls_)
    if (p.copy_deadline) waiting.push_back(id);
  for (const auto& id : waiting)
    if (auto it = pulls_.find(id); it != pulls_.end()) await_copy(id, it->second, now, out);
}

size_t ObjectPuller::retry_room(Outbox& out) {
  room_next_.reset();
  std::vector<ObjectId> held;
  for (const auto& [id, p] : pulls_)
    if (p.room) held.push_back(id);
  size_t made = 0;
  for (const auto& id : held) {
    auto it = pulls_.find(id);
    if (it == pulls_.end() || !it->second.room) continue;
    HeldReply reply = std::move(*it->second.room);
    it->second.room.reset();
    make_copy(id, it->second, std::move(reply), out);
    if (auto again = pulls_.find(id); again == pulls_.end() || !again->second.room) ++made;
  }
  return made;
}

void ObjectPuller::on_request(int src, const char* data, size_t len, Outbox& out) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  // A spilled object is read back from its HDF5 file first: that is I/O of its whole size
  // (about 0.1 s per GiB from the page cache, more from disk), which the loop, whose turns carry
  // the heartbeats, leaves to a pool thread (restored() answers).
  if (store_ && std::strcmp(store_->info(id).where, "spilled") == 0) {
    out.restores.push_back(Restore{src, id});
    return;
  }
  std::optional<store::ObjectView> v;
  std::string error;
  try {
    if (store_) v = store_->get(id);
  } catch (const std::exception& e) {
    error = e.what();
  }
  answer(src, id, std::move(v), error, out);
}

void ObjectPuller::restore(store::NodeStore& store, const Restore& r,
                           std::optional<store::ObjectView>* view, std::string* error) {
  try {
    *view = store.get(r.id);
  } catch (const std::exception& e) {
    *error = e.what();
  }
}

void ObjectPuller::restored(const Restore& r, std::optional<store::ObjectView> view,
                            const std::string& error, Outbox& out) {
  if (failed(r.src)) return;  // the reader is gone: the view goes with this call
  answer(r.src, r.id, std::move(view), error, out);
}

void ObjectPuller::answer(int src, const ObjectId& id, std::optional<store::ObjectView> v,
                          const std::string& error, Outbox& out) {
  serde::Buffer b;
  WireWriter w(b);
  w.put<ObjectId>(id);
  if (!v) {
    w.put<uint8_t>(static_cast<uint8_t>(PullMode::kError));
    w.put_str(error.empty() ? "node " + std::to_string(topo_.node) + " does not hold it (freed?)"
                            : error);
    out.msgs.push_back(OutMsg{src, Msg::kPullReply, b.take()});
    return;
  }
  if (!v->in_segment()) {  // a fallback file: not registered memory, send the bytes
    w.put<uint8_t>(static_cast<uint8_t>(PullMode::kBytes));
    out.bytes.push_back(BytesReply{src, b.take(), std::move(*v)});
    return;
  }
  w.put<uint8_t>(static_cast<uint8_t>(PullMode::kSegment));
  w.put<uint64_t>(store_->offset_of(*v));
  w.put<uint64_t>(v->size());
  out.msgs.push_back(OutMsg{src, Msg::kPullReply, b.take()});
  lent_.emplace(std::make_pair(src, id), std::move(*v));
}

void ObjectPuller::on_done(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  auto it = lent_.find(std::make_pair(src, id));
  if (it != lent_.end()) lent_.erase(it);
}

void ObjectPuller::peer_failed(int rank, const std::string& reason, Outbox& out) {
  for (auto it = lent_.begin(); it != lent_.end();)
    it = it->first.first == rank ? lent_.erase(it) : std::next(it);
  std::vector<ObjectId> lost;
  for (auto& [id, p] : pulls_) {
    if (p.holder != rank) continue;
    const int other = fallback_holder(id, rank);
    if (other < 0 || p.requests >= kMaxRequests) {
      lost.push_back(id);
      continue;
    }
    WEFT_LOG(Info) << "pulling " << id.str() << " from its owner, rank " << other << ": rank "
                   << rank << ", which held it, failed (" << reason << ")";
    p.holder = other;
    p.copy_deadline.reset();
    p.room.reset();  // a reply of the failed holder, held for room: its pin is gone with it
    ++p.requests;
    request(id, other, out);
  }
  for (const auto& id : lost)
    finish(id, "rank " + std::to_string(rank) + ", which holds it, failed (" + reason + ")");
}

}  // namespace weft::core
