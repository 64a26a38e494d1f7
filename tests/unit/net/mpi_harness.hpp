// A tiny harness for the multi-rank transport tests: a sink that records messages, a pump that
// polls until a condition holds (with a deadline, so a bug fails instead of hanging), and a
// teardown barrier that keeps serving peers while it waits. MPI is used only for setup and
// teardown, never to move test data.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "net/transport.hpp"

namespace weft::net::testing {

inline int g_failures = 0;
#define NET_EXPECT(cond, ...)                                               \
  do {                                                                      \
    if (!(cond)) {                                                          \
      ++::weft::net::testing::g_failures;                                   \
      std::fprintf(stderr, "FAILED %s:%d: %s ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                    \
      std::fprintf(stderr, "\n");                                           \
    }                                                                       \
  } while (0)

struct FnSink : MessageSink {
  std::function<void(int, uint16_t, const char*, size_t)> on_msg;
  std::function<void(int, const std::string&)> on_fail;
  void on_message(int src, uint16_t type, const char* data, size_t len) override {
    if (on_msg) on_msg(src, type, data, len);
  }
  void on_peer_failed(int rank, const std::string& reason) override {
    if (on_fail) on_fail(rank, reason);
  }
};

// Polls (parking in wait() when idle) until done() or the deadline. Returns done().
inline bool pump(Transport& t, MessageSink& s, const std::function<bool()>& done,
                 std::chrono::seconds deadline = std::chrono::seconds(20)) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    if (t.poll(s) == 0) t.wait(std::chrono::microseconds(1000));
  }
  return true;
}

// Teardown barrier: flushes our outboxes and keeps serving until every rank arrived.
inline void serve_until_all_done(Transport& t, MessageSink& s, MPI_Comm world) {
  pump(t, s, [&] { return t.idle(); });
  MPI_Request req;
  MPI_Ibarrier(world, &req);
  int flag = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!flag && std::chrono::steady_clock::now() < end) {
    if (t.poll(s) == 0) t.wait(std::chrono::microseconds(500));
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
  }
  if (!flag) {
    std::fprintf(stderr, "FAILED: teardown barrier timed out\n");
    std::abort();
  }
}

inline uint64_t checksum(const char* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {  // word at a time: the tests hash hundreds of MB
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 1099511628211ull;
  }
  for (; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 1099511628211ull;
  return h;
}

// Position-based pattern: byte j of the stream `seed` is a function of (seed, j), so a receiver
// can check any sub-range without a reference copy.
inline uint64_t pattern_word(uint64_t seed, uint64_t word) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + word + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline void fill(char* p, size_t n, uint64_t seed) {
  for (size_t j = 0; j < n; j += 8) {
    const uint64_t w = pattern_word(seed, j / 8);
    std::memcpy(p + j, &w, std::min<size_t>(8, n - j));
  }
}

// True when p[0, n) equals bytes [offset, offset + n) of stream `seed`.
inline bool matches(const char* p, size_t n, uint64_t seed, size_t offset = 0) {
  size_t j = offset;
  const size_t end = offset + n;
  while (j < end) {
    const uint64_t w = pattern_word(seed, j / 8);
    char b[8];
    std::memcpy(b, &w, 8);
    const size_t in = j % 8, take = std::min<size_t>(8 - in, end - j);
    if (std::memcmp(p + (j - offset), b + in, take) != 0) return false;
    j += take;
  }
  return true;
}

}  // namespace weft::net::testing
