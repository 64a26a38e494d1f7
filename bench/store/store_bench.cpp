// Node store figures, each beside a baseline measured in the same run:
//   put bandwidth        vs memcpy into pre-faulted memory
//   same-node get        vs the 1 KiB get (flatness) and vs copying the object (what zero-copy
//                           saves)
//   spill / restore      vs plain write()/read() of the same bytes in the same directory
// Usage: weft_store_bench [--quick] [--dir DIR]   (DIR defaults to $TMPDIR or /tmp)
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "store/node_store.hpp"
#include "store/spill_file.hpp"

using namespace weft::store;
using weft::ObjectId;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string human(size_t b) {
  char buf[32];
  if (b >= (1ull << 30))
    std::snprintf(buf, sizeof buf, "%zu GiB", b >> 30);
  else if (b >= (1ull << 20))
    std::snprintf(buf, sizeof buf, "%zu MiB", b >> 20);
  else
    std::snprintf(buf, sizeof buf, "%zu KiB", b >> 10);
  return buf;
}

void row(const char* what, const std::string& size, double value, double base, const char* unit) {
  std::printf("%-22s %8s %12.2f %12.2f %-6s %7.1f%%\n", what, size.c_str(), value, base, unit,
              100.0 * value / base);
}

std::vector<std::byte> source(size_t n) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t x = i * 0x9E3779B97F4A7C15ull;
    std::memcpy(v.data() + i, &x, std::min<size_t>(8, n - i));
  }
  return v;
}

// Best of `reps` runs of fn(), in seconds.
template <class F>
double best_of(int reps, F fn) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t = Clock::now();
    fn();
    best = std::min(best, seconds_since(t));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
  }
  const size_t big = quick ? (64ull << 20) : (1ull << 30);
  StoreOptions o;
  o.name = "weft_store_bench_" + std::to_string(::getpid());
  o.capacity = big + (64 << 20);
  o.spill_threshold = 1.0;  // no spilling in the put/get part
  o.spill_dir = dir + "/weft-store-bench-" + std::to_string(::getpid());
  auto s = NodeStore::create(o);
  const auto src = source(big);
  std::vector<std::byte> dst(big);
  std::memset(dst.data(), 1, big);  // fault the baseline's pages in, as the store's will be
  uint64_t seq = 0;

  std::printf("%-22s %8s %12s %12s %-6s %8s\n", "measure", "size", "weft", "baseline", "unit",
              "ratio");
  // ---- put bandwidth -------------------------------------------------------------------------
  for (size_t n : {size_t(1) << 20, size_t(64) << 20, big}) {
    if (n > big) continue;
    const int reps = n >= (256u << 20) ? 3 : 10;
    {  // first touch of the segment's pages is not what we measure
      WritableObject w = s->create(ObjectId{0, 0, ++seq}, n, true);
      std::memset(w.data().data(), 0, n);
    }
    const double t_put = best_of(reps, [&] {
      const ObjectId id{0, 0, ++seq};
      WritableObject w = s->create(id, n, true);
      std::memcpy(w.data().data(), src.data(), n);
      w.seal();
      s->remove(id);
    });
    const double t_cpy = best_of(reps, [&] { std::memcpy(dst.data(), src.data(), n); });
    row("put bandwidth", human(n), n / t_put / 1e9, n / t_cpy / 1e9, "GB/s");
  }

  // ---- get latency -----------------------------------------------------------------------------
  double base_ns = 0;
  for (size_t n : {size_t(1) << 10, size_t(1) << 20, size_t(64) << 20, big}) {
    const ObjectId id{0, 0, ++seq};
    {
      WritableObject w = s->create(id, n, true);
      std::memcpy(w.data().data(), src.data(), n);
      w.seal();
    }
    const int iters = 20000;
    volatile std::byte sink{};
    const double t = best_of(3, [&] {
      for (int i = 0; i < iters; ++i) {
        auto v = s->get(id);
        sink = v->data()[0];
      }
    });
    const double ns = t / iters * 1e9;
    if (base_ns == 0) base_ns = ns;
    row("get latency (vs 1KiB)", human(n), ns / 1e3, base_ns / 1e3, "us");
    const double t_copy = best_of(3, [&] { std::memcpy(dst.data(), src.data(), n); });
    row("get latency (vs copy)", human(n), ns / 1e3, t_copy * 1e6, "us");
    s->remove(id);
  }
  s.reset();

  // ---- spill and restore -----------------------------------------------------------------------
  std::filesystem::create_directories(o.spill_dir);
  for (size_t n : {size_t(64) << 20, quick ? size_t(64) << 20 : size_t(512) << 20}) {
    const std::string h5 = o.spill_dir + "/bench.h5", raw = o.spill_dir + "/bench.raw";
    const ObjectId id{0, 0, 1};
    const std::span<const std::byte> bytes(src.data(), n);
    const int reps = 3;
    const double t_spill = best_of(reps, [&] {
      bool full = false;
      write_spill_file(h5, id, bytes, &full);
    });
    const double t_write = best_of(reps, [&] {
      int fd = ::open(raw.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      for (size_t off = 0; off < n;)
        off += ::write(fd, src.data() + off, std::min(n - off, size_t(8) << 20));
      ::close(fd);
    });
    row("spill (HDF5) vs write", human(n), n / t_spill / 1e9, n / t_write / 1e9, "GB/s");
    const double t_restore =
        best_of(reps, [&] { read_spill_file(h5, id, std::span<std::byte>(dst.data(), n)); });
    const double t_read = best_of(reps, [&] {
      int fd = ::open(raw.c_str(), O_RDONLY);
      for (size_t off = 0; off < n;)
        off += ::read(fd, dst.data() + off, std::min(n - off, size_t(8) << 20));
      ::close(fd);
    });
    row("restore vs read", human(n), n / t_restore / 1e9, n / t_read / 1e9, "GB/s");
    std::filesystem::remove(h5);
    std::filesystem::remove(raw);
  }
  std::filesystem::remove_all(o.spill_dir);
  return 0;
}
