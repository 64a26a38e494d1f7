// Helpers shared by the store tests: unique segment names and spill directories, byte patterns
// that every check can recompute, and fork() helpers that report a child's verdict by exit code.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <thread>

#include "store/node_store.hpp"

namespace weft::store::testing {

inline std::string unique_suffix() {
  static std::atomic<int> n{0};
  return std::to_string(::getpid()) + "_" + std::to_string(n++);
}

// A store configuration whose names and directory are unique to this test; the directory is
// removed when the fixture dies.
struct TempStore {
  StoreOptions opts;
  explicit TempStore(size_t capacity) {
    const std::string s = unique_suffix();
    opts.name = "weft_store_test_" + s;
    opts.capacity = capacity;
    opts.spill_dir = std::filesystem::temp_directory_path() / ("weft-store-test-" + s);
    opts.alloc_timeout = std::chrono::milliseconds(5000);
  }
  ~TempStore() {
    std::error_code ec;
    std::filesystem::remove_all(opts.spill_dir, ec);
  }
  size_t files_in_spill_dir() const {
    size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(opts.spill_dir, ec);
         !ec && it != std::filesystem::directory_iterator(); ++it) {
      ++n;
    }
    return n;
  }
};

inline StoreOptions attach_options(const std::string& name) {
  StoreOptions o;
  o.name = name;
  return o;
}

inline ObjectId oid(uint64_t seq, int32_t owner = 0) { return ObjectId{owner, 0, seq}; }

// Word i of object `seq` holds a value no other (object, word) pair is likely to share.
inline uint64_t pattern_word(uint64_t seq, uint64_t i) {
  uint64_t x = (seq + 1) * 0x9E3779B97F4A7C15ull ^ (i * 0xC2B2AE3D27D4EB4Full);
  return x ^ (x >> 31);
}

inline void fill_pattern(std::span<std::byte> out, uint64_t seq) {
  const size_t words = out.size() / 8;
  auto* w = reinterpret_cast<uint64_t*>(out.data());
  for (size_t i = 0; i < words; ++i) w[i] = pattern_word(seq, i);
  for (size_t i = words * 8; i < out.size(); ++i) out[i] = std::byte(seq + i);
}

// Returns the index of the first byte that differs from the pattern, or -1.
inline int64_t check_pattern(std::span<const std::byte> in, uint64_t seq) {
  const size_t words = in.size() / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t v;
    std::memcpy(&v, in.data() + i * 8, 8);
    if (v != pattern_word(seq, i)) return int64_t(i * 8);
  }
  for (size_t i = words * 8; i < in.size(); ++i) {
    if (in[i] != std::byte(seq + i)) return int64_t(i);
  }
  return -1;
}

// Writes, seals and returns nothing: the common "put".
inline void put(NodeStore& s, uint64_t seq, size_t size, bool primary = true) {
  WritableObject w = s.create(oid(seq), size, primary).take();
  fill_pattern(w.data(), seq);
  w.seal();
}

// Runs `body` in a forked child and returns its exit status (0 = success), or 128 + the signal
// that ended it. The child never returns into the test framework. A child still running after
// `limit` is hung (no child here needs more than a second): it gets SIGSEGV, so that a sanitizer
// build prints the stack where it stopped, and the answer is 128 + SIGSEGV.
inline int run_in_child(const std::function<int()>& body,
                        std::chrono::seconds limit = std::chrono::seconds(40)) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int rc = 99;
    try {
      rc = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      rc = 98;
    } catch (...) {
      rc = 97;
    }
    ::_exit(rc);
  }
  const auto end = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= end) {
      std::fprintf(stderr, "run_in_child: child %d still running after %lld s: sent SIGSEGV\n",
                   static_cast<int>(pid), static_cast<long long>(limit.count()));
      ::kill(pid, SIGSEGV);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Polls `cond` every millisecond for up to `limit`.
inline bool eventually(const std::function<bool()>& cond,
                       std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return cond();
}

}  // namespace weft::store::testing
