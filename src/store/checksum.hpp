// A streaming 64-bit checksum for spill files (xxHash64's round function over four lanes): fast
// enough (~memory bandwidth) that verifying a restore costs little next to the read itself.
// Detects corruption, not tampering.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace weft::store {

class Checksum {
 public:
  static constexpr size_t kStripe = 32;
  // Every update but the last must be a multiple of kStripe bytes long.
  void update(std::span<const std::byte> bytes);
  uint64_t finish() const;

 private:
  uint64_t acc_[4] = {0x60EA27EEADC0B5D6ull, 0xC2B2AE3D27D4EB4Full, 0x0ull, 0x61C8864E7A143579ull};
  uint64_t tail_ = 0;
  uint64_t total_ = 0;
};

uint64_t checksum(std::span<const std::byte> bytes);

}  // namespace weft::store
