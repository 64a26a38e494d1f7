// A streaming 64-bit checksum for spill files, shaped like XXH3's accumulator: eight 64-bit
// lanes, each stripe of 64 bytes mixed with one 32×32→64 multiply per lane, scrambled every
// 1 KiB. Written with vector types so the compiler uses SIMD at the default target (SSE2
// multiplies 32×32→64 natively), plus an AVX-512 clone picked at load time; it sits inside the
// spill and restore loops, so its speed is part of theirs. Detects corruption, not tampering.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace weft::store {

class Checksum {
 public:
  static constexpr size_t kStripe = 64;
  Checksum();
  // Every update but the last must be a multiple of kStripe bytes long.
  void update(std::span<const std::byte> bytes);
  // update(from), also copying `from` to `to` (from.size() bytes) in the same pass over memory.
  void copy_and_update(std::span<const std::byte> from, std::byte* to);
  uint64_t finish() const;

 private:
  void update_impl(std::span<const std::byte> bytes, std::byte* copy_to);
  static constexpr int kLanes = 8;
  uint64_t acc_[kLanes];
  uint32_t stripes_in_block_ = 0;
  uint64_t tail_ = 0;
  uint64_t total_ = 0;
};

uint64_t checksum(std::span<const std::byte> bytes);

}  // namespace weft::store
