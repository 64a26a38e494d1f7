// The data plane: values above the inline threshold stay in the node store of the rank that made
// them (the primary); the owner records where, borrowers learn it from the owner, and a reader on
// another node pulls a secondary copy with RMA from the holder's registered segment (the pull
// protocol: ObjectPuller, object_puller.hpp; this file carries out what it returns). A same-node
// reader never copies: it maps the same segment.
#include <cstring>
#include <span>

#include "common/log.hpp"
#include "common/timeline.hpp"
#include "core/event_loop.hpp"
#include "core/object_store_client.hpp"

namespace weft::core {
int64_t store_result(const ObjectId& ret, const DirectResult& direct, std::vector<char>& value,
                     bool& ok, detail::ErrorInfo& err) {
  if (!ok) return -1;
  if (direct.error) {  // the body's thread could not write it in place
    ok = false;
    err = *direct.error;
    return -1;
  }
  if (direct.stored >= 0) return direct.stored;
  ObjectStoreClient* c = store_client();
  if (!c || value.size() <= c->inline_threshold()) return -1;
  size_t n = value.size();
  try {
    n = c->store().put_result(ret, std::as_bytes(std::span(value)));
  } catch (const std::exception& e) {
    ok = false;
    err = result_store_error(ret, value.size(), e);
    value.clear();
    return -1;
  }
  std::vector<char>().swap(value);
  return static_cast<int64_t>(n);
}

detail::ErrorInfo result_store_error(const ObjectId& ret, size_t size, const std::exception& e) {
  detail::ErrorInfo err;
  err.kind = dynamic_cast<const ObjectStoreFullError*>(&e) ? detail::ErrorKind::kStoreFull
                                                           : detail::ErrorKind::kGeneric;
  ObjectStoreClient* c = store_client();
  err.rank = c ? c->topology().rank : -1;
  err.message = "the result " + ret.str() + " (" + std::to_string(size) +
                " bytes) could not be stored on node " +
                (c ? std::to_string(c->topology().node) : std::string("?")) + ": " + e.what();
  return err;
}

ObjectPuller& EventLoop::puller() {
  if (!puller_) {
    ObjectStoreClient* c = store_client();
    puller_ = std::make_unique<ObjectPuller>(topo_, c ? &c->store() : nullptr, &failed_);
  }
  return *puller_;
}

size_t EventLoop::pull_room_tick() {
  ObjectPuller::Outbox out;
  const size_t n = puller_->retry_room(out);
  carry_out(out);
  return n;
}

void EventLoop::carry_out(ObjectPuller::Outbox& out) {
  send_all(out.msgs);
  for (const auto& r : out.restores) {
    // Reading a spilled object back is I/O of its whole size: on a pool thread, never in a turn
    // (which would hold back this rank's heartbeats); the reply is made back on the loop.
    pool_.submit_apart([this, r] {
      std::optional<store::ObjectView> view;
      std::string error = "this rank's object store has closed";
      if (ObjectStoreClient* c = store_client()) {
        error.clear();
        ObjectPuller::restore(c->store(), r, &view, &error);
      }
      post([r, view = std::move(view), error](EventLoop& l) mutable {
        ObjectPuller::Outbox next;
        l.puller().restored(r, std::move(view), error, next);
        l.carry_out(next);
      });
    });
  }
  out.restores.clear();
  for (auto& r : out.bytes)
    transport_.send(r.dest, static_cast<uint16_t>(Msg::kPullReply), r.head.data(), r.head.size(),
                    r.view.data(), r.view.size());
  out.bytes.clear();
  for (auto& r : out.reads)
    transport_.rma_get(r.holder, store_client()->region(), r.offset, r.copy->data().data(), r.size,
                       [this, r, start = timeline::enabled() ? timeline::now_ns() : 0](
                           bool ok, const std::string& error) {
                         if (start && ok)
                           timeline::record(timeline::Kind::kTransfer, start, timeline::now_ns(),
                                            static_cast<uint64_t>(r.holder), r.size);
                         ObjectPuller::Outbox next;
                         puller().on_read_done(r, ok, error, next);
                         carry_out(next);
                       });
  out.reads.clear();
  if (out.recheck && !recheck_posted_) {
    recheck_posted_ = true;
    post([](EventLoop& l) {
      l.recheck_posted_ = false;
      ObjectPuller::Outbox next;
      l.puller().recheck(std::chrono::steady_clock::now(), next);
      l.carry_out(next);
    });
  }
  out.recheck = false;
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
                else if (!retry_lost_result(src, id, e) &&  // task_retry.cpp
                         !hold_lost_call_result(src, id, e))  // actor_restarts.cpp
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
  w.put<int32_t>(copy_source(*sp));
  w.put<uint64_t>(sp->size());
  std::vector<StatePtr> contained;  // refs inside the value: the reader borrows them too
  add_contained(contained, s);
  put_ref_ids(w, contained);
  send_with_refs(dest, Msg::kObjectLocation, b, std::move(contained));
  return true;
}

int EventLoop::copy_source(const StorePayload& sp) const {
  // A ready stored value always has a copy on this rank's node: the primary, the owner's copy
  // (handle_stored_result), or the copy a borrower pulled to complete it. So when the primary's
  // rank has failed, readers elsewhere pull from here.
  return known_failed(sp.holder()) ? rank_ : sp.holder();
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
              [this, id, contained = std::move(contained)](std::shared_ptr<const detail::Payload> p,
                                                           detail::ErrorInfo e) mutable {
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

// --- pulling (ObjectPuller) ---------------------------------------------------------------

void EventLoop::pull_object(const ObjectId& id, int holder, size_t size, bool owner_record,
                            PulledFn done) {
  ObjectPuller::Outbox out;
  puller().pull(id, holder, size, owner_record, std::move(done), out);
  carry_out(out);
}

void EventLoop::handle_pull_request(int src, const char* data, size_t len) {
  ObjectPuller::Outbox out;
  puller().on_request(src, data, len, out);
  carry_out(out);
}

void EventLoop::handle_pull_reply(int src, const char* data, size_t len) {
  ObjectPuller::Outbox out;
  puller().on_reply(src, data, len, out);
  carry_out(out);
}

void EventLoop::handle_pull_done(int src, const char* data, size_t len) {
  puller().on_done(src, data, len);
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
