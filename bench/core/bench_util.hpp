// Shared pieces of the runtime benchmarks: timing, the result table and the JSON rows that
// bench/compare merges with the peers' (bench/peers/common.py documents the format).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace weft::bench {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Row {
  std::string system;  // "weft" or "baseline"
  std::string name;
  double value = 0;
  std::string unit;    // per_s, us, GB_per_s, ratio
  double task_us = -1; // efficiency rows only
  std::string note;
};

class Report {
 public:
  void add(Row r) { rows_.push_back(std::move(r)); }
  // A Weft figure with the baseline it is compared with (ratio = value / baseline, or
  // baseline / value for latencies so that > 1 is always "Weft is better").
  void compare(const std::string& name, double value, const std::string& unit,
               const std::string& base_name, double base) {
    add({"weft", name, value, unit});
    table_.push_back({name, value, unit, base_name, base});
  }
  void print() const {
    std::printf("\n%-34s %14s %-9s %-26s %14s %8s\n", "benchmark", "weft", "unit", "baseline",
                "baseline", "ratio");
    for (const auto& t : table_) {
      double ratio = t.unit == "us" ? t.base / t.value : t.value / t.base;
      std::printf("%-34s %14.2f %-9s %-26s %14.2f %8.3f\n", t.name.c_str(), t.value,
                  t.unit.c_str(), t.base_name.c_str(), t.base, ratio);
    }
    std::printf("(ratio > 1: Weft better than the baseline; for latencies (us) it is baseline/weft)\n");
  }
  void write_json(const std::string& path) const {
    if (path.empty()) return;
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return;
    std::fprintf(f, "[\n");
    for (size_t i = 0; i < rows_.size(); ++i) {
      const Row& r = rows_[i];
      std::fprintf(f, "  {\"system\": \"%s\", \"name\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"",
                   r.system.c_str(), r.name.c_str(), r.value, r.unit.c_str());
      if (r.task_us >= 0) std::fprintf(f, ", \"task_us\": %g", r.task_us);
      if (!r.note.empty()) std::fprintf(f, ", \"note\": \"%s\"", r.note.c_str());
      std::fprintf(f, "}%s\n", i + 1 < rows_.size() ? "," : "");
    }
    std::fprintf(f, "]\n");
    std::fclose(f);
  }

 private:
  struct Cmp {
    std::string name;
    double value;
    std::string unit, base_name;
    double base;
  };
  std::vector<Row> rows_;
  std::vector<Cmp> table_;
};

inline std::string json_path(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--json") return argv[i + 1];
  return "";
}
// The integer after `flag`, or `def` when the flag is absent.
inline long long int_flag(int argc, char** argv, const char* flag, long long def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == flag) return std::stoll(argv[i + 1]);
  return def;
}
inline bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == flag) return true;
  return false;
}

}  // namespace weft::bench
