// Warnings that many requests would repeat word for word (ten identical infeasible tasks): the
// first of each text is logged at once, later ones are counted and summed up in one line per
// text at most every `every`, and when the loop ends. No I/O: the loop logs what it returns.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace weft::core {

class RepeatedWarnings {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RepeatedWarnings(Clock::duration every) : every_(every) {}

  // True the first time `text` is seen: log it now. Later calls count it.
  bool note(const std::string& text) {
    auto [it, fresh] = seen_.try_emplace(text, 0);
    if (fresh) return true;
    if (it->second++ == 0) ++texts_repeated_;
    return false;
  }
  bool has_repeats() const { return texts_repeated_ > 0; }
  // The texts seen again since the last summary, with how many times, once `every` has passed
  // since then (or at once with `final`); empty otherwise.
  std::vector<std::pair<std::string, uint64_t>> summary(Clock::time_point now, bool final = false) {
    std::vector<std::pair<std::string, uint64_t>> out;
    // The first summary is due at once: the steady clock's epoch may be less than `every` ago
    // (a machine booted minutes before), so "since the last" cannot start from it.
    if (texts_repeated_ == 0 || (!final && last_ && now - *last_ < every_)) return out;
    last_ = now;
    for (auto& [text, n] : seen_)
      if (n > 0) out.emplace_back(text, std::exchange(n, 0));
    texts_repeated_ = 0;
    return out;
  }

 private:
  const Clock::duration every_;
  std::unordered_map<std::string, uint64_t> seen_;  // text → repeats since the last summary
  size_t texts_repeated_ = 0;
  std::optional<Clock::time_point> last_;  // the last summary's time; none before the first
};

}  // namespace weft::core
