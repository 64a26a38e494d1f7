#include "net/shm_link.hpp"

#include <algorithm>

namespace weft::net::detail {

size_t flush_to_ring(RingWriter& w, Outbox& out, bool* published) {
  size_t done = 0;
  const size_t max_payload = w.max_frame_payload();
  while (!out.empty()) {
    OutMessage& m = out.front();
    const size_t chunk = std::min(max_payload, m.len - m.sent);
    uint8_t flags = 0;
    if (m.sent == 0) flags |= kFlagFirst;
    if (m.sent + chunk == m.len) flags |= kFlagLast;
    const uint32_t total = static_cast<uint32_t>(m.len);
    if (!w.try_write(m.type, flags, (flags & kFlagFirst) ? total : 0, m.data.get() + m.sent, chunk))
      break;
    m.sent += chunk;
    if (flags & kFlagLast) {
      out.pop_front();
      ++done;
    }
  }
  *published = w.publish();
  return done;
}

}  // namespace weft::net::detail
