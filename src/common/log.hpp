// One logger for the whole runtime: leveled, rank-prefixed lines written with a single write(2)
// each, so lines of concurrent ranks and threads never interleave. Off the hot path by design:
// a disabled level costs one load and a branch.
#pragma once

#include <atomic>
#include <sstream>
#include <string>

namespace weft::log {

enum class Level : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

// Current threshold; lines above it are dropped. Initialised from WEFT_LOG_LEVEL
// (error|warn|info|debug|trace), default warn.
Level level();
void set_level(Level l);
bool parse_level(const std::string& s, Level* out);
// The rank shown in every line's prefix (-1 until the runtime knows it).
void set_rank(int rank);
int rank();

// The rank's log file (the session directory's logs/rank-<r>.log, for `weft logs`): from now
// on every line also goes there, and lines down to info do even when stderr shows fewer.
// False (and nothing changes) when it cannot be opened. close_file() stops writing there.
bool open_file(const std::string& path);
void close_file();
// The most verbose level anything prints: stderr's, or info while a file is open.
Level effective_level();

inline bool enabled(Level l) {
  return static_cast<int>(l) <= static_cast<int>(effective_level());
}

class Line {
 public:
  Line(Level l, const char* file, int line);
  ~Line();
  template <class T>
  Line& operator<<(const T& v) {
    os_ << v;
    return *this;
  }

 private:
  Level level_;
  std::ostringstream os_;
};

// Turns a streamed line into a void expression, so WEFT_LOG works as one statement anywhere
// (also as the body of an unbraced if) without a dangling else.
struct Voidify {
  template <class T>
  void operator&(const T&) const {}
};

}  // namespace weft::log

#define WEFT_LOG_ENABLED(lvl) (::weft::log::enabled(::weft::log::Level::k##lvl))
// Usage: WEFT_LOG(Info) << "started " << n << " workers";
#define WEFT_LOG(lvl)                                  \
  !WEFT_LOG_ENABLED(lvl) ? (void)0                     \
                         : ::weft::log::Voidify() &   \
                               ::weft::log::Line(::weft::log::Level::k##lvl, __FILE__, __LINE__)
