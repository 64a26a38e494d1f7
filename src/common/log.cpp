#include "common/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace weft::log {
namespace {

Level initial_level() {
  Level l = Level::kWarn;
  if (const char* s = std::getenv("WEFT_LOG_LEVEL")) parse_level(s, &l);
  return l;
}

std::atomic<int>& level_ref() {
  static std::atomic<int> lvl{static_cast<int>(initial_level())};
  return lvl;
}
std::atomic<int> g_rank{-1};
std::atomic<int> g_file{-1};  // the log file's descriptor, -1 without one

const auto g_start = std::chrono::steady_clock::now();

const char* level_tag(Level l) {
  switch (l) {
    case Level::kError: return "E";
    case Level::kWarn: return "W";
    case Level::kInfo: return "I";
    case Level::kDebug: return "D";
    case Level::kTrace: return "T";
  }
  return "?";
}

}  // namespace

Level level() { return static_cast<Level>(level_ref().load(std::memory_order_relaxed)); }
Level effective_level() {
  const int l = level_ref().load(std::memory_order_relaxed);
  return static_cast<Level>(g_file.load(std::memory_order_relaxed) >= 0
                                ? std::max(l, static_cast<int>(Level::kInfo))
                                : l);
}

bool open_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  g_file.store(fd);
  return true;
}

// The descriptor stays open: another thread may be writing a line to it this very moment, and
// a closed number could be reused for some other file. One descriptor per runtime started.
void close_file() { g_file.store(-1); }
void set_level(Level l) { level_ref().store(static_cast<int>(l), std::memory_order_relaxed); }
void set_rank(int r) { g_rank.store(r, std::memory_order_relaxed); }
int rank() { return g_rank.load(std::memory_order_relaxed); }

bool parse_level(const std::string& s, Level* out) {
  static const struct { const char* name; Level l; } kNames[] = {
      {"error", Level::kError}, {"warn", Level::kWarn},   {"warning", Level::kWarn},
      {"info", Level::kInfo},   {"debug", Level::kDebug}, {"trace", Level::kTrace}};
  for (const auto& n : kNames) {
    if (strcasecmp(s.c_str(), n.name) == 0) {
      *out = n.l;
      return true;
    }
  }
  return false;
}

Line::Line(Level l, const char* file, int line) : level_(l) {
  double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
  const char* base = std::strrchr(file, '/');
  char prefix[96];
  std::snprintf(prefix, sizeof prefix, "[weft r%d %s %.3f %s:%d] ", rank(), level_tag(l), t,
                base ? base + 1 : file, line);
  os_ << prefix;
}

Line::~Line() {
  os_ << '\n';
  std::string s = os_.str();
  // One write per line; a short write is not worth retrying in a logger.
  if (static_cast<int>(level_) <= static_cast<int>(level())) {
    ssize_t ignored = ::write(2, s.data(), s.size());
    (void)ignored;
  }
  if (const int fd = g_file.load(std::memory_order_relaxed); fd >= 0) {
    ssize_t ignored = ::write(fd, s.data(), s.size());
    (void)ignored;
  }
}

}  // namespace weft::log
