// The data plane: values above the inline threshold stay in the node store of the rank that made
// them (the primary); the owner records where, borrowers learn it from the owner, and a reader on
// another node pulls a secondary copy with RMA from the holder's registered segment. A same-node
// reader never copies: it maps the same segment.
//
// Pull protocol (reader R, holder H on another node):
//   R → H kPullRequest(id)       H pins the object (restoring it if spilled) so it cannot move
//   H → R kPullReply(offset)     or the bytes (fallback objects), or an error
//   R: create a secondary, rma_get into it, seal
//   R → H kPullDone(id)          H unpins
// Two ranks of R's node pulling the same object race to create the secondary: the store tells
// the loser (kExists / kInProgress) and it waits for the winner's copy (await_copy), asking H
// itself if the winner gives up. Any other failure to make the copy (store full, a fallback file
// that cannot be made) fails the pull's waiters at once, naming the object, node and cause.
#include <cstring>

#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/object_store_client.hpp"

namespace weft::core {
namespace {

enum class PullMode : uint8_t { kError = 0, kSegment = 1, kBytes = 2 };

// How many times one pull asks the holder: the first request, plus one per other rank of this
// node that took over the copy and then gave it up.
constexpr int kMaxPullRequests = 4;
// How long a pull waits for another rank of this node to finish the same copy.
constexpr auto kCopyWait = std::chrono::seconds(60);

detail::ErrorInfo pull_error(detail::ErrorKind kind, int rank, const std::string& msg) {
  detail::ErrorInfo e;
  e.kind = kind;
  e.rank = rank;
  e.message = msg;
  return e;
}

}  // namespace

detail::ErrorInfo lost_error(int rank, const std::string& msg) {
  return pull_error(detail::ErrorKind::kObjectLost, rank, msg);
}

int64_t store_result(const ObjectId& ret, std::vector<char>& value, bool& ok,
                     detail::ErrorInfo& err) {
  ObjectStoreClient* c = store_client();
  if (!ok || !c || value.size() <= c->inline_threshold()) return -1;
  try {
    store::WritableObject w = c->store().create(ret, value.size(), /*primary=*/true).take();
    std::memcpy(w.data().data(), value.data(), value.size());
    w.seal();
  } catch (const std::exception& e) {
    ok = false;
    err.kind = dynamic_cast<const ObjectStoreFullError*>(&e) ? detail::ErrorKind::kStoreFull
                                                             : detail::ErrorKind::kGeneric;
    err.rank = c->topology().rank;
    err.message = "the result " + ret.str() + " (" + std::to_string(value.size()) +
                  " bytes) could not be stored on node " + std::to_string(c->topology().node) +
                  ": " + e.what();
    value.clear();
    return -1;
  }
  int64_t n = static_cast<int64_t>(value.size());
  std::vector<char>().swap(value);
  return n;
}

TransferTable& EventLoop::xfer() {
  if (!xfer_) xfer_ = std::make_unique<TransferTable>();
  return *xfer_;
}

// --- results and locations --------------------------------------------------------------------

void EventLoop::send_stored_result(int owner, const ObjectId& ret, size_t size,
                                   std::vector<StatePtr> contained) {
  if (owner == rank_) {
    auto p = std::make_shared<StorePayload>(ret, rank_, size, /*owner_record=*/true, std::nullopt);
    on_result(rank_, ret, true, nullptr, 0, {}, std::move(p), std::move(contained));
    return;
  }
  serde::Buffer b;
  WireWriter w(b);
  w.put<ObjectId>(ret);
  w.put<int32_t>(rank_);
  w.put<uint64_t>(size);
  put_ref_ids(w, contained);  // the owner borrows the refs inside the value
  send_with_refs(owner, Msg::kStoredResult, b, std::move(contained));
}

void EventLoop::handle_stored_result(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  int holder = r.get<int32_t>();
  auto size = r.get<uint64_t>();
  std::vector<StatePtr> contained = accept_refs(get_ref_ids(r));
  if (!objects_.find(id)) {
    on_result(src, id, false, nullptr, 0, {});  // nobody wants it: release the slot, free it
    free_stored(holder, id);
    return;
  }
  // The owner keeps a copy on its own node, so its later reads and borrowers' requests never
  // wait on another node.
  pull_object(id, holder, size, /*owner_record=*/true,
              [this, src, id, contained = std::move(contained)](
                  std::shared_ptr<const detail::Payload> p, detail::ErrorInfo e) mutable {
                if (p)
                  on_result(src, id, true, nullptr, 0, {}, std::move(p), std::move(contained));
                else
                  on_result(src, id, false, nullptr, 0, std::move(e));
              });
}

bool EventLoop::reply_stored(int dest, const ObjectState& s) {
  if (s.status() != detail::ObjectStatus::kReady) return false;
  auto* sp = dynamic_cast<const StorePayload*>(s.payload.get());
  if (!sp) return false;
  sp->note_reader(dest);  // its copy is freed with the value
  serde::Buffer b;
  WireWriter w(b);
  w.put<ObjectId>(s.id);
  w.put<int32_t>(sp->holder());
  w.put<uint64_t>(sp->size());
  std::vector<StatePtr> contained;  // refs inside the value: the reader borrows them too
  add_contained(contained, s);
  put_ref_ids(w, contained);
  send_with_refs(dest, Msg::kObjectLocation, b, std::move(contained));
  return true;
}

void EventLoop::handle_object_location(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  int holder = r.get<int32_t>();
  auto size = r.get<uint64_t>();
  std::vector<StatePtr> contained = accept_refs(get_ref_ids(r));
  StatePtr s = objects_.find(id);
  if (!s || s->done()) return;
  pull_object(id, holder, size, /*owner_record=*/false,
              [this, id, contained = std::move(contained)](
                  std::shared_ptr<const detail::Payload> p, detail::ErrorInfo e) mutable {
                StatePtr s = objects_.find(id);
                if (!s || s->done()) return;
                if (p && !contained.empty())
                  s->contained = std::make_unique<std::vector<StatePtr>>(std::move(contained));
                if (p)
                  complete_ok(*s, std::move(p), completions_);
                else
                  complete_error(*s, std::move(e), completions_);
                on_object_done(s);
              });
}

// --- pulling ----------------------------------------------------------------------------------

void EventLoop::pull_object(const ObjectId& id, int holder, size_t size, bool owner_record,
                            PulledFn done) {
  ObjectStoreClient* c = store_client();
  if (!c) {
    done(nullptr, lost_error(rank_, "no object store on rank " + std::to_string(rank_)));
    return;
  }
  if (topo_.same_node(holder)) {  // same segment: nothing to copy, ever
    done(std::make_shared<StorePayload>(id, holder, size, owner_record, std::nullopt), {});
    return;
  }
  std::optional<store::ObjectView> v;
  try {
    v = c->store().get(id);
  } catch (const std::exception& e) {  // a copy here that cannot be read (its fallback file)
    done(nullptr, pull_error(detail::ErrorKind::kGeneric, rank_,
                             "reading " + id.str() + " from the object store of node " +
                                 std::to_string(topo_.node) + " failed: " + e.what()));
    return;
  }
  if (v) {  // another rank of this node pulled it already
    done(std::make_shared<StorePayload>(id, holder, size, owner_record, std::move(v)), {});
    return;
  }
  auto& pull = xfer().pulls[id];
  pull.waiters.push_back({owner_record, std::move(done)});
  if (pull.waiters.size() > 1) return;
  pull.holder = holder;
  pull.size = size;
  pull.requests = 1;
  serde::Buffer b;
  WireWriter w(b);
  w.put<ObjectId>(id);
  send(holder, Msg::kPullRequest, b);
}

void EventLoop::finish_pull(const ObjectId& id, const std::string& error) {
  auto it = xfer().pulls.find(id);
  if (it == xfer().pulls.end()) return;
  TransferTable::Pull pull = std::move(it->second);
  xfer().pulls.erase(it);
  for (auto& w : pull.waiters) {
    std::optional<store::ObjectView> v;
    std::string why = error;
    if (why.empty()) {
      try {
        v = store_client()->store().get(id);
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (!v && why.empty()) why = "the copy vanished from this node's store";
    }
    if (v)
      w.done(
          std::make_shared<StorePayload>(id, pull.holder, pull.size, w.owner_record, std::move(v)),
          {});
    else
      w.done(nullptr,
             pull_error(pull.error_kind, rank_,
                        "pulling " + id.str() + " (" + std::to_string(pull.size) +
                            " bytes) from rank " + std::to_string(pull.holder) + " on node " +
                            std::to_string(topo_.node_of_rank[pull.holder]) + " to rank " +
                            std::to_string(rank_) + " on node " + std::to_string(topo_.node) +
                            " failed: " + why));
  }
}

void EventLoop::handle_pull_request(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  serde::Buffer b;
  WireWriter w(b);
  w.put<ObjectId>(id);
  std::optional<store::ObjectView> v;
  std::string error;
  try {
    if (ObjectStoreClient* c = store_client()) v = c->store().get(id);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!v) {
    w.put<uint8_t>(static_cast<uint8_t>(PullMode::kError));
    w.put_str(error.empty() ? "node " + std::to_string(topo_.node) + " does not hold it (freed?)"
                            : error);
    send(src, Msg::kPullReply, b);
    return;
  }
  if (!v->in_segment()) {  // a fallback file: not registered memory, send the bytes
    w.put<uint8_t>(static_cast<uint8_t>(PullMode::kBytes));
    transport_.send(src, static_cast<uint16_t>(Msg::kPullReply), b.data(), b.size(), v->data(),
                    v->size());
    return;
  }
  w.put<uint8_t>(static_cast<uint8_t>(PullMode::kSegment));
  w.put<uint64_t>(store_client()->store().offset_of(*v));
  w.put<uint64_t>(v->size());
  send(src, Msg::kPullReply, b);
  xfer().lent.emplace(std::make_pair(src, id), std::move(*v));
}

void EventLoop::handle_pull_reply(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  auto mode = static_cast<PullMode>(r.get<uint8_t>());
  auto it = xfer().pulls.find(id);
  if (it == xfer().pulls.end()) return;
  if (mode == PullMode::kError) {
    finish_pull(id, r.get_str());
    return;
  }
  store::NodeStore& st = store_client()->store();
  uint64_t offset = 0, size = 0;
  const char* bytes = nullptr;
  if (mode == PullMode::kSegment) {
    offset = r.get<uint64_t>();
    size = r.get<uint64_t>();
  } else {
    auto [p, n] = r.rest();
    bytes = p;
    size = n;
  }
  auto done_with_holder = [this, src, id, mode] {
    if (mode != PullMode::kSegment) return;
    serde::Buffer b;
    WireWriter w(b);
    w.put<ObjectId>(id);
    send(src, Msg::kPullDone, b);
  };
  std::optional<store::CreateResult> made;
  try {
    made.emplace(st.create(id, size, /*primary=*/false));
  } catch (const std::exception& e) {
    // A real failure (full, a fallback file that cannot be made): no copy is coming from
    // anywhere, so the waiters learn it now.
    done_with_holder();
    it->second.error_kind = dynamic_cast<const ObjectStoreFullError*>(&e)
                                ? detail::ErrorKind::kStoreFull
                                : detail::ErrorKind::kGeneric;
    finish_pull(id, std::string("no copy can be made in this node's object store: ") + e.what());
    return;
  }
  if (!made->created()) {
    // Another rank of this node made (kExists) or is making (kInProgress) the same copy.
    done_with_holder();
    await_copy(id, std::chrono::steady_clock::now() + kCopyWait);
    return;
  }
  auto copy = std::make_shared<store::WritableObject>(std::move(made->object()));
  if (mode == PullMode::kBytes) {
    if (size) std::memcpy(copy->data().data(), bytes, size);
    copy->seal();
    finish_pull(id, "");
    return;
  }
  transport_.rma_get(src, store_client()->region(), offset, copy->data().data(), size,
                     [this, id, copy, done_with_holder](bool ok, const std::string& error) {
                       done_with_holder();
                       if (ok) copy->seal();
                       finish_pull(id, ok ? "" : "RMA read failed: " + error);
                     });
}

void EventLoop::await_copy(const ObjectId& id, std::chrono::steady_clock::time_point deadline) {
  auto it = xfer().pulls.find(id);
  if (it == xfer().pulls.end()) return;
  TransferTable::Pull& pull = it->second;
  switch (store_client()->store().presence(id)) {
    case store::Presence::kSealed:
      finish_pull(id, "");  // each waiter gets (and pins) it there
      return;
    case store::Presence::kAbsent:
      // The other rank gave its copy up (its own pull failed, or it was evicted already):
      // ask the holder again, so this pull does not inherit a failure that was not its own.
      if (pull.requests >= kMaxPullRequests) {
        finish_pull(id, "other ranks of this node took over the copy " +
                            std::to_string(pull.requests) + " times and gave it up each time");
        return;
      }
      ++pull.requests;
      {
        serde::Buffer b;
        WireWriter w(b);
        w.put<ObjectId>(id);
        send(pull.holder, Msg::kPullRequest, b);
      }
      return;
    case store::Presence::kAbandoned:
      pull.error_kind = detail::ErrorKind::kGeneric;
      finish_pull(id, "the process of this node that was writing the copy died before sealing it");
      return;
    case store::Presence::kRemoving:
      pull.error_kind = detail::ErrorKind::kGeneric;
      finish_pull(id, "its owner freed it while the copy on this node was still open");
      return;
    case store::Presence::kWriting:
      break;
  }
  if (std::chrono::steady_clock::now() > deadline) {
    finish_pull(id, "another rank of this node has been writing the copy for " +
                        std::to_string(kCopyWait.count()) + " s without finishing it");
    return;
  }
  // Rare (two ranks of one node pulling the same object at once) and short: re-check on the
  // loop's next round instead of blocking it.
  post([id, deadline](EventLoop& l) { l.await_copy(id, deadline); });
}

void EventLoop::handle_pull_done(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  auto it = xfer().lent.find(std::make_pair(src, id));
  if (it != xfer().lent.end()) xfer().lent.erase(it);
}

// --- freeing ----------------------------------------------------------------------------------

void EventLoop::free_stored(int holder, const ObjectId& id) {
  if (topo_.same_node(holder)) {
    if (ObjectStoreClient* c = store_client()) c->store().remove(id);
    return;
  }
  serde::Buffer b;
  WireWriter w(b);
  w.put<ObjectId>(id);
  send(holder, Msg::kFreeObject, b);
}

void EventLoop::handle_free_object(const char* data, size_t len) {
  WireReader r(data, len);
  auto id = r.get<ObjectId>();
  if (ObjectStoreClient* c = store_client()) c->store().remove(id);
}

}  // namespace weft::core
