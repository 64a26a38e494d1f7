// Durations as people write them in messages: "250 µs", "100 ms", "1.5 s", "2.5 min".
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace weft {

inline std::string duration_text(std::chrono::nanoseconds d) {
  const double ns = static_cast<double>(d.count());
  const char* unit = "ns";
  double v = ns;
  if (ns >= 120e9) {
    v = ns / 60e9, unit = "min";
  } else if (ns >= 1e9) {
    v = ns / 1e9, unit = "s";
  } else if (ns >= 1e6) {
    v = ns / 1e6, unit = "ms";
  } else if (ns >= 1e3) {
    v = ns / 1e3, unit = "µs";
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, unit);  // at most 4 digits, no trailing zeros
  return buf;
}

}  // namespace weft
