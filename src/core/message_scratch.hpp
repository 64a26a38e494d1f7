// MessageScratch: buffers for the control messages the loop builds and sends within one call
// (the transport copies a message out before send returns), reused instead of allocated per
// message. A remote task's submit and its result were a fresh 256-byte buffer each, allocated and
// freed on the hot path. Leases nest (a send that fails a peer may build more messages), each
// with its own buffer. Loop turns only: the loop's token makes the single user.
#pragma once

#include <utility>
#include <vector>

#include "weft/detail/serde_buffer.hpp"

namespace weft::core {

class MessageScratch {
 public:
  class Lease {
   public:
    explicit Lease(MessageScratch& s) : s_(s), b_(s.take()) {}
    ~Lease() { s_.give(std::move(b_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    serde::Buffer& buffer() { return b_; }

   private:
    MessageScratch& s_;
    serde::Buffer b_;
  };

  // Buffers kept between messages; kept ones grew to at most kMaxKeptBytes.
  size_t kept() const { return free_.size(); }
  static constexpr size_t kMaxKept = 8;
  static constexpr size_t kMaxKeptBytes = 64 << 10;

 private:
  serde::Buffer take() {
    if (free_.empty()) return serde::Buffer();
    serde::Buffer b = std::move(free_.back());
    free_.pop_back();
    b.clear();
    return b;
  }
  void give(serde::Buffer b) {
    // A buffer whose bytes were taken (a message that waits for owners) comes back empty: not
    // worth keeping. A large one is not kept either: its memory goes back.
    if (b.capacity() == 0 || b.capacity() > kMaxKeptBytes || free_.size() >= kMaxKept) return;
    free_.push_back(std::move(b));
  }

  std::vector<serde::Buffer> free_;
};

}  // namespace weft::core
