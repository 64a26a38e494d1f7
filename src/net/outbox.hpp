// Messages queued for one peer, in send order, each an owned copy of the caller's bytes. The
// front message may be partly on the wire (fragments already written); `sent` tracks how much.
// Keeping order here, not in the ring or UCX, is what lets a full ring or exhausted credits
// delay a peer without reordering or blocking the event loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>

namespace weft::net::detail {

struct OutMessage {
  uint16_t type = 0;
  size_t len = 0;
  size_t sent = 0;  // bytes of the front message already written (fragmentation)
  std::unique_ptr<char[]> data;
};

class Outbox {
 public:
  void push(uint16_t type, const void* a, size_t alen, const void* b, size_t blen) {
    OutMessage m;
    m.type = type;
    m.len = alen + blen;
    if (m.len) {
      m.data = std::make_unique_for_overwrite<char[]>(m.len);
      if (alen) std::memcpy(m.data.get(), a, alen);
      if (blen) std::memcpy(m.data.get() + alen, b, blen);
    }
    bytes_ += m.len;
    q_.push_back(std::move(m));
  }
  bool empty() const { return q_.empty(); }
  size_t size() const { return q_.size(); }
  size_t bytes() const { return bytes_; }
  OutMessage& front() { return q_.front(); }
  const OutMessage& at(size_t i) const { return q_[i]; }
  OutMessage take_front() {
    OutMessage m = std::move(q_.front());
    q_.pop_front();
    bytes_ -= m.len;
    return m;
  }
  void pop_front() { bytes_ -= q_.front().len, q_.pop_front(); }
  void clear() { q_.clear(), bytes_ = 0; }

 private:
  std::deque<OutMessage> q_;
  size_t bytes_ = 0;
};

}  // namespace weft::net::detail
