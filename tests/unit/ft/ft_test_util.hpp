// Helpers for the checkpoint tests: a private directory per test, state bytes every check can
// recompute, raw file surgery (flip, cut), and a fork() helper that reports a child's verdict by
// its exit code.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace weft::ft::testing {

// A directory unique to this test, removed with everything in it when the fixture dies.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> n{0};
    path = std::filesystem::temp_directory_path() /
           ("weft-ft-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  // Names in the directory other than `except`'s (temporaries, leftovers).
  std::vector<std::string> others(const std::filesystem::path& except) const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path)) {
      if (e.path() != except) out.push_back(e.path().filename().string());
    }
    return out;
  }
};

// n bytes that depend on every position and on `seed`.
inline std::vector<char> pattern(size_t n, uint64_t seed) {
  std::vector<char> v(n);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v[i] = static_cast<char>(x);
  }
  return v;
}

inline std::vector<char> file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void put_file_bytes(const std::filesystem::path& p, const std::vector<char>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Runs fn() in a forked child and returns its exit code (fn's return value; 100 if it threw), or
// 128 + signal. The child leaves with _exit: no atexit handlers, no second run of the tests.
inline int run_in_child(const std::function<int()>& fn) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int rc = 100;
    try {
      rc = fn();
    } catch (...) {
    }
    std::fflush(stdout);
    ::_exit(rc);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace weft::ft::testing
