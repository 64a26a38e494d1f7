// Position-derived test data for the multirank object tests: element i of object `seed` is cheap
// to produce and to check, and no two positions or seeds share a run of it, so a misplaced,
// stale or truncated copy shows up as mismatches.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace weft_test {

template <class W>
W pattern_at(uint64_t i, uint64_t seed) {
  return static_cast<W>((i * 0x9E3779B97F4A7C15ull) ^ (seed * 0xC2B2AE3D27D4EB4Full) ^ (i >> 7) ^
                        (i >> 11));
}

template <class W>
std::vector<W> pattern(uint64_t n, uint64_t seed) {
  std::vector<W> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = pattern_at<W>(i, seed);
  return v;
}

template <class W>
uint64_t mismatches(std::span<const W> v, uint64_t seed) {
  uint64_t bad = 0;
  for (uint64_t i = 0; i < v.size(); ++i) bad += v[i] != pattern_at<W>(i, seed);
  return bad;
}

}  // namespace weft_test
