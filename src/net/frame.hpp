// The wire format shared by both paths: a 16-byte header before every payload, both 16-byte
// aligned. The same frames fill shared-memory rings and coalesced UCX active messages, so one
// validator guards both. Version bumps when the layout changes; a frame of another version is
// dropped (a mixed-build job must fail loudly, not decode garbage).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "net/limits.hpp"

namespace weft::net::detail {

inline constexpr uint16_t kFrameMagic = 0x5746;  // "WF"
inline constexpr uint8_t kFrameVersion = 1;
inline constexpr size_t kFrameAlign = 16;

enum FrameFlags : uint8_t {
  kFlagPad = 1,    // filler up to the ring's end; no payload to deliver
  kFlagFirst = 2,  // first fragment of a message (aux = total length)
  kFlagLast = 4,   // last fragment; a whole message carries First|Last
};

struct FrameHeader {
  uint16_t magic;
  uint8_t version;
  uint8_t flags;
  uint16_t type;
  uint16_t reserved;
  uint32_t len;  // payload bytes in this frame
  uint32_t aux;  // total message length on a First fragment
};
static_assert(sizeof(FrameHeader) == kFrameAlign);

inline constexpr size_t align_up(size_t n) { return (n + kFrameAlign - 1) & ~(kFrameAlign - 1); }
inline constexpr size_t frame_bytes(size_t payload) {
  return sizeof(FrameHeader) + align_up(payload);
}

inline FrameHeader make_header(uint16_t type, uint8_t flags, uint32_t len, uint32_t aux) {
  return FrameHeader{kFrameMagic, kFrameVersion, flags, type, 0, len, aux};
}

// Checks a header that sits in a buffer with `avail` bytes from the header's start. Returns an
// empty string when valid, else why not (for the log line that names the peer).
inline std::string validate(const FrameHeader& h, size_t avail) {
  if (h.magic != kFrameMagic) return "bad magic " + std::to_string(h.magic);
  if (h.version != kFrameVersion) return "unsupported frame version " + std::to_string(h.version);
  if (h.flags & ~(kFlagPad | kFlagFirst | kFlagLast)) return "unknown flags";
  // A pad frame is filler and nothing else: with a message flag beside it, it would be
  // delivered as a message that skipped the reserved-type check.
  if ((h.flags & kFlagPad) && h.flags != kFlagPad) return "pad flag combined with message flags";
  if (h.flags != kFlagPad && h.type >= kFirstReservedType && h.type != kBulkMessageType)
    return "reserved message type " + std::to_string(h.type);
  if (frame_bytes(h.len) > avail)
    return "frame length " + std::to_string(h.len) + " overruns the " + std::to_string(avail) +
           " bytes available";
  return {};
}

// A batch (one UCX active message, ucx_messenger.cpp) is whole messages back to back, each one
// First|Last frame padded to kFrameAlign. One writer and one reader, so both agree on it.
inline void append_batched(std::vector<char>& batch, uint16_t type, const void* data,
                           uint32_t len) {
  const size_t at = batch.size();
  batch.resize(at + frame_bytes(len));  // zeroed padding
  const FrameHeader h = make_header(type, kFlagFirst | kFlagLast, len, len);
  std::memcpy(batch.data() + at, &h, sizeof h);
  if (len) std::memcpy(batch.data() + at + sizeof h, data, len);
}

// Calls fn(type, payload, len) for each message of a batch, in order. Returns an empty string when
// the whole batch was valid, else why the frame where it stopped was refused (the rest is
// dropped: a byte stream cannot be resynchronised).
template <class Fn>
std::string for_each_batched(const char* data, size_t len, Fn&& fn) {
  size_t pos = 0;
  while (pos < len) {
    FrameHeader h;
    if (len - pos < sizeof h) return "truncated frame header";
    std::memcpy(&h, data + pos, sizeof h);
    std::string why = validate(h, len - pos);
    if (why.empty() && h.flags != (kFlagFirst | kFlagLast)) why = "fragment inside a batch";
    if (why.empty() && h.aux != h.len) why = "whole message with total != length";
    if (!why.empty()) return why;
    fn(h.type, data + pos + sizeof h, static_cast<size_t>(h.len));
    pos += frame_bytes(h.len);
  }
  return {};
}

}  // namespace weft::net::detail
