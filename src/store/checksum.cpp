#include "store/checksum.hpp"

#include <bit>
#include <cstring>

#include "common/check.hpp"

namespace weft::store {
namespace {
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;

inline uint64_t round(uint64_t acc, uint64_t lane) { return std::rotl(acc + lane * kP2, 31) * kP1; }
inline uint64_t load64(const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
}  // namespace

void Checksum::update(std::span<const std::byte> bytes) {
  WEFT_CHECK(total_ % kStripe == 0) << "Checksum::update after a partial stripe";
  const std::byte* p = bytes.data();
  size_t n = bytes.size();
  uint64_t a0 = acc_[0], a1 = acc_[1], a2 = acc_[2], a3 = acc_[3];
  while (n >= kStripe) {
    a0 = round(a0, load64(p));
    a1 = round(a1, load64(p + 8));
    a2 = round(a2, load64(p + 16));
    a3 = round(a3, load64(p + 24));
    p += kStripe;
    n -= kStripe;
  }
  acc_[0] = a0, acc_[1] = a1, acc_[2] = a2, acc_[3] = a3;
  for (size_t i = 0; i < n; ++i) {
    tail_ = std::rotl(tail_ ^ (static_cast<uint64_t>(p[i]) * kP3), 11) * kP1;
  }
  total_ += bytes.size();
}

uint64_t Checksum::finish() const {
  uint64_t h = std::rotl(acc_[0], 1) + std::rotl(acc_[1], 7) + std::rotl(acc_[2], 12) +
               std::rotl(acc_[3], 18);
  h ^= tail_ + total_ * kP3;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  return h ^ (h >> 32);
}

uint64_t checksum(std::span<const std::byte> bytes) {
  Checksum c;
  c.update(bytes);
  return c.finish();
}

}  // namespace weft::store
