#include "net/shm_ring.hpp"

#include "common/check.hpp"

namespace weft::net::detail {

RingWriter::RingWriter(RingControl* ctl, size_t capacity)
    : ctl_(ctl), data_(reinterpret_cast<char*>(ctl + 1)), cap_(capacity) {
  WEFT_CHECK(capacity >= 256 && (capacity & (capacity - 1)) == 0) << "capacity " << capacity;
  tail_ = published_ = ctl_->tail.load(std::memory_order_relaxed);
  head_cache_ = ctl_->head.load(std::memory_order_acquire);
}

bool RingWriter::try_write(uint16_t type, uint8_t flags, uint32_t aux, const void* a, size_t alen,
                           const void* b, size_t blen) {
  const size_t len = alen + blen;
  WEFT_CHECK(len <= max_frame_payload()) << "frame of " << len << " bytes";
  const size_t need = frame_bytes(len);
  const size_t idx = tail_ & (cap_ - 1);
  const size_t to_end = cap_ - idx;
  const size_t pad = need > to_end ? to_end : 0;
  if (tail_ + pad + need - head_cache_ > cap_) {
    head_cache_ = ctl_->head.load(std::memory_order_acquire);
    if (tail_ + pad + need - head_cache_ > cap_) return false;
  }
  if (pad) {
    FrameHeader ph = make_header(0, kFlagPad, static_cast<uint32_t>(pad - sizeof(FrameHeader)), 0);
    std::memcpy(data_ + idx, &ph, sizeof ph);
    tail_ += pad;
  }
  char* p = data_ + (tail_ & (cap_ - 1));
  FrameHeader h = make_header(type, flags, static_cast<uint32_t>(len), aux);
  std::memcpy(p, &h, sizeof h);
  if (alen) std::memcpy(p + sizeof h, a, alen);
  if (blen) std::memcpy(p + sizeof h + alen, b, blen);
  tail_ += need;
  return true;
}

bool RingWriter::publish() {
  if (tail_ == published_) return false;
  ctl_->tail.store(tail_, std::memory_order_release);
  published_ = tail_;
  return true;
}

RingReader::RingReader(RingControl* ctl, size_t capacity)
    : ctl_(ctl), data_(reinterpret_cast<const char*>(ctl + 1)), cap_(capacity) {
  WEFT_CHECK(capacity >= 256 && (capacity & (capacity - 1)) == 0) << "capacity " << capacity;
  head_ = ctl_->head.load(std::memory_order_relaxed);
}

}  // namespace weft::net::detail
