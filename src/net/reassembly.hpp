// Turns the frames of one sender into whole messages. A First|Last frame is delivered in place
// (zero copy); fragments are appended to a per-sender buffer sized from the First frame's total.
// Any inconsistency (a middle fragment with no first, a size beyond the announced total) drops
// the partial message with a logged error that names the peer, never an overread; memory grows
// with the bytes received, not with the total a first fragment announces.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "net/frame.hpp"

namespace weft::net::detail {

class Reassembler {
 public:
  using Deliver = std::function<void(uint16_t type, const char* data, size_t len)>;

  // Feeds one validated frame. Calls deliver when a message completes; returns false (after
  // logging) when the frame was inconsistent with what came before and was dropped.
  template <class DeliverFn>
  bool feed(int peer, const FrameHeader& h, const char* payload, DeliverFn&& deliver);
  bool in_progress() const { return active_; }

 private:
  static constexpr size_t kReserveBytes = size_t{4} << 20;
  bool fail(int peer, const std::string& why);
  bool active_ = false;
  uint16_t type_ = 0;
  size_t total_ = 0;
  std::vector<char> buf_;
};

inline bool Reassembler::fail(int peer, const std::string& why) {
  WEFT_LOG(Error) << "net: dropping message from rank " << peer << ": " << why;
  active_ = false;
  buf_.clear();
  return false;
}

template <class DeliverFn>
bool Reassembler::feed(int peer, const FrameHeader& h, const char* payload, DeliverFn&& deliver) {
  const bool first = h.flags & kFlagFirst, last = h.flags & kFlagLast;
  if (first && last) {
    if (active_) fail(peer, "whole message inside a fragmented one");
    if (h.aux != h.len) return fail(peer, "whole message with total != length");
    deliver(h.type, payload, h.len);
    return true;
  }
  if (first) {
    if (active_) fail(peer, "new message before the previous one's last fragment");
    if (h.aux < h.len) return fail(peer, "first fragment longer than its message");
    active_ = true;
    type_ = h.type;
    total_ = h.aux;
    buf_.clear();
    // The total is the sender's word, up to 4 GiB from one 16-byte header: reserve at most what
    // a few fragments bring, and let the buffer grow with the bytes that really arrive.
    buf_.reserve(std::min(total_, kReserveBytes));
  } else if (!active_ || h.type != type_) {
    return fail(peer, "fragment without a first fragment");
  }
  if (buf_.size() + h.len > total_) return fail(peer, "fragments exceed the announced total");
  buf_.insert(buf_.end(), payload, payload + h.len);
  if (last) {
    if (buf_.size() != total_) return fail(peer, "last fragment before the announced total");
    active_ = false;
    deliver(type_, buf_.data(), buf_.size());
    // Do not keep a 100 MB buffer around for the next small message.
    if (buf_.capacity() > (size_t{4} << 20)) std::vector<char>().swap(buf_);
  }
  return true;
}

}  // namespace weft::net::detail
