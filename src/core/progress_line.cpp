// weft::Progress (include/weft/progress.hpp).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <weft/progress.hpp>

namespace weft {

Progress::Progress(std::string what, size_t total)
    : what_(std::move(what)),
      total_(total),
      tty_(::isatty(2) != 0),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (!tty_) return;
  draw(last_);
  std::fputc('\n', stderr);
}

void Progress::update(size_t done) {
  last_ = done;
  if (!tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100) && done < total_) return;
  last_draw_ = now;
  draw(done);
}

void Progress::draw(size_t done) {
  constexpr int kWidth = 30;
  const double frac = total_ ? std::min(1.0, static_cast<double>(done) / total_) : 1.0;
  const int full = static_cast<int>(frac * kWidth + 0.5);
  char bar[kWidth + 1];
  for (int i = 0; i < kWidth; ++i) bar[i] = i < full ? '#' : '.';
  bar[kWidth] = '\0';
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // \r and the erase-to-end: the line is redrawn in place.
  std::fprintf(stderr, "\r[%s] %zu/%zu %s  %.1f s\x1b[K", bar, done, total_, what_.c_str(), secs);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace weft
