// weft::Progress: a progress line on stderr for a driver's long loop, drawn only while stderr is
// a terminal (a batch job's log gets nothing), redrawn at most every 100 ms:
//   [##########..........] 250/500 trials  2.1 s
// `weft status --watch` shows the same for any running job, from another shell.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace weft {

class Progress {
 public:
  Progress(std::string what, size_t total);
  ~Progress();  // ends the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(size_t done);
  bool shown() const { return tty_; }

 private:
  void draw(size_t done);

  std::string what_;
  size_t total_, last_ = 0;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_{};
};

}  // namespace weft
