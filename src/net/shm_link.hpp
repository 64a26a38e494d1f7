// One direction of a same-node link: the sender moves its outbox into the ring (fragmenting
// messages larger than a ring frame, stopping at the first frame that does not fit so order
// is kept), the receiver drains the ring through a Reassembler. Both halves are plain
// functions over the ring so unit tests can drive them in one process.
#pragma once

#include <cstddef>

#include "net/outbox.hpp"
#include "net/reassembly.hpp"
#include "net/shm_ring.hpp"

namespace weft::net::detail {

// Writes queued messages (or the next fragments of the front one) while they fit, then
// publishes once. Returns the number of messages fully written; *published tells whether the
// reader has anything new (so the caller rings its doorbell).
size_t flush_to_ring(RingWriter& w, Outbox& out, bool* published);

// Drains up to `max_frames` frames from the ring of sender `peer`, calling
// deliver(type, data, len) for each complete message. Returns the number delivered;
// *frames (optional) receives the number of frames consumed, i.e. whether space was freed.
template <class DeliverFn>
size_t drain_ring(int peer, RingReader& r, Reassembler& re, size_t max_frames, DeliverFn&& deliver,
                  size_t* frames = nullptr) {
  size_t delivered = 0;
  const size_t f = r.drain(
      max_frames,
      [&](const FrameHeader& h, const char* payload) {
        re.feed(peer, h, payload, [&](uint16_t type, const char* data, size_t len) {
          ++delivered;
          deliver(type, data, len);
        });
      },
      [&](const std::string& why) {
        WEFT_LOG(Error) << "net: corrupt ring from rank " << peer << " (" << why
                        << "); pending frames dropped";
      });
  if (frames) *frames = f;
  return delivered;
}

}  // namespace weft::net::detail
