// A single-producer single-consumer byte ring of frames (frame.hpp) in memory that two
// processes share. Positions are monotonically increasing 64-bit byte counters; a frame never
// straddles the end (a pad frame fills the gap), so the reader hands out payloads in place.
// The writer publishes its tail once per batch and the reader its head once per drain: one
// cache-line transfer per batch, not per message.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "net/frame.hpp"

namespace weft::net::detail {

// Lives at the start of each ring's slot in shared memory. Head and tail sit on separate cache
// lines so the two sides do not false-share.
struct RingControl {
  alignas(64) std::atomic<uint64_t> tail;  // written by the producer only
  alignas(64) std::atomic<uint64_t> head;  // written by the consumer only
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// Bytes a ring slot needs for `capacity` data bytes (capacity: a power of two, >= 256).
inline size_t ring_slot_bytes(size_t capacity) { return sizeof(RingControl) + capacity; }

class RingWriter {
 public:
  RingWriter() = default;
  // `capacity` must be a power of two; the memory after `ctl` holds the data.
  RingWriter(RingControl* ctl, size_t capacity);

  // Largest payload one frame may carry; larger messages are fragmented by the caller. A quarter
  // of the ring keeps the pad waste bounded and lets several fragments be in flight.
  size_t max_frame_payload() const { return cap_ / 4 - sizeof(FrameHeader); }

  // Appends a frame whose payload is a||b. Returns false (and writes nothing) when it does not
  // fit now. The frame becomes visible to the reader only at publish().
  bool try_write(uint16_t type, uint8_t flags, uint32_t aux, const void* a, size_t alen,
                 const void* b = nullptr, size_t blen = 0);
  // Publishes every frame written since the last publish; returns whether there were any.
  bool publish();
  bool valid() const { return ctl_ != nullptr; }

 private:
  RingControl* ctl_ = nullptr;
  char* data_ = nullptr;
  size_t cap_ = 0;
  uint64_t tail_ = 0;        // local tail, ahead of the published one while batching
  uint64_t published_ = 0;   // last tail stored to shared memory
  uint64_t head_cache_ = 0;  // reader's head as last seen (refreshed only when full)
};

class RingReader {
 public:
  RingReader() = default;
  RingReader(RingControl* ctl, size_t capacity);

  // True when frames are waiting (one acquire load).
  bool has_data() const { return ctl_ && ctl_->tail.load(std::memory_order_acquire) != head_; }

  // Calls fn(const FrameHeader&, const char* payload) for up to `max_frames` visible frames, then
  // releases their space at once. A frame that fails validation is reported through
  // on_error(reason) and everything visible is dropped (a byte stream cannot be resynchronised);
  // the reader never reads outside the ring. Returns the number of frames handed to fn.
  template <class Fn, class ErrFn>
  size_t drain(size_t max_frames, Fn&& fn, ErrFn&& on_error);
  bool valid() const { return ctl_ != nullptr; }

 private:
  RingControl* ctl_ = nullptr;
  const char* data_ = nullptr;
  size_t cap_ = 0;
  uint64_t head_ = 0;
};

template <class Fn, class ErrFn>
size_t RingReader::drain(size_t max_frames, Fn&& fn, ErrFn&& on_error) {
  const uint64_t tail = ctl_->tail.load(std::memory_order_acquire);
  if (tail == head_) return 0;
  if (tail - head_ > cap_ || (tail - head_) % kFrameAlign != 0) {
    on_error("ring tail " + std::to_string(tail) + " inconsistent with head " +
             std::to_string(head_));
    head_ = tail;
    ctl_->head.store(head_, std::memory_order_release);
    return 0;
  }
  size_t n = 0;
  uint64_t pos = head_;
  while (pos != tail && n < max_frames) {
    const size_t idx = pos & (cap_ - 1);
    const size_t to_end = cap_ - idx;
    const size_t visible = tail - pos;
    // A correct writer keeps positions 16-aligned, so a header always fits before the end; a
    // corrupt one may not have (an unaligned tail, adopted after it was reported): never read
    // a header past the ring's end or past what is visible.
    if (to_end < sizeof(FrameHeader) || visible < sizeof(FrameHeader)) {
      on_error("frame header at ring offset " + std::to_string(idx) + " crosses the end of " +
               (to_end < sizeof(FrameHeader) ? "the ring" : "the visible bytes"));
      pos = tail;
      break;
    }
    // Copy the header out: the writer is another process and must not change it under us.
    FrameHeader h;
    std::memcpy(&h, data_ + idx, sizeof h);
    if (h.magic == kFrameMagic && h.flags == kFlagPad && visible >= to_end) {
      pos += to_end;
      continue;
    }
    std::string why = validate(h, visible < to_end ? visible : to_end);
    // A writer pads only up to the ring's end and publishes past it; a pad frame that ends
    // before the end, or whose end is not yet visible, was never written by one.
    if (why.empty() && h.flags == kFlagPad)
      why = "pad frame at ring offset " + std::to_string(idx) + " does not reach the ring's end";
    if (!why.empty()) {
      on_error(why);
      pos = tail;
      break;
    }
    fn(static_cast<const FrameHeader&>(h), data_ + idx + sizeof(FrameHeader));
    pos += frame_bytes(h.len);
    ++n;
  }
  head_ = pos;
  ctl_->head.store(head_, std::memory_order_release);
  return n;
}

}  // namespace weft::net::detail
