// The event loop's side of reference counting: it feeds BorrowProtocol (borrow_protocol.hpp)
// what happens on this rank and sends what it returns.
#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/state_gather.hpp"

namespace weft::core {

void EventLoop::send_all(MsgOutbox& out) {
  for (const OutMsg& m : out)
    transport_.send(m.dest, static_cast<uint16_t>(m.type), m.body.data(), m.body.size());
  out.clear();
}

void EventLoop::queue_release(const ObjectId& id, uint32_t credits) {
  if (borrow_.queue_release(id, credits) && !stopped()) transport_.wake();
}

void EventLoop::add_contained(std::vector<StatePtr>& out, const ObjectState& s) {
  if (s.contained) out.insert(out.end(), s.contained->begin(), s.contained->end());
}

void EventLoop::send_with_refs(int dest, Msg type, serde::Buffer& b, std::vector<StatePtr> refs) {
  if (refs.empty()) return send(dest, type, b);  // the common case: no owner to wait for
  borrow_.send(dest, type, b.take(), std::move(refs), outbox_);
  send_all(outbox_);
}

std::vector<StatePtr> EventLoop::accept_refs(const std::vector<ObjectId>& ids) {
  if (ids.empty()) return {};
  return borrow_.accept(ids);
}

size_t EventLoop::flush_refcount() {
  borrow_.flush(outbox_);
  const size_t n = outbox_.size();
  send_all(outbox_);
  return n;
}

void EventLoop::handle_borrow_add(int src, const char* data, size_t len) {
  borrow_.on_add(src, data, len, outbox_);
  send_all(outbox_);
}

void EventLoop::handle_borrow_ack(const char* data, size_t len) {
  borrow_.on_ack(data, len, outbox_);
  send_all(outbox_);
}

void EventLoop::handle_borrow_release(int src, const char* data, size_t len) {
  borrow_.on_release(src, data, len);
}

std::vector<int> EventLoop::failed_ranks() const { return failed_.list(); }

void EventLoop::mark_failed(int rank) {
  if (!failed_.add(rank)) return;
  if (gather_) gather_->on_rank_failed(rank, "rank " + std::to_string(rank) + " failed");
  const uint64_t dropped = borrow_.peer_failed(rank, outbox_);
  send_all(outbox_);
  if (dropped > 0)
    WEFT_LOG(Info) << "dropped " << dropped << " borrow credits held by failed rank " << rank;
}

}  // namespace weft::core
