// Node store figures, each beside a baseline measured in the same run:
//   put bandwidth        vs memcpy into pre-faulted memory
//   same-node get        vs the 1 KiB get (flatness) and vs copying the object (what zero-copy
//                           saves)
//   spill / restore      vs `dd` and vs plain write()/read() of the same bytes, in the same
//                           directory, with and without fdatasync (see the spill section)
// Usage: weft_store_bench [--quick] [--spill-only] [--dir DIR]   (DIR: $TMPDIR or /tmp)
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

constexpr size_t kMiB = size_t(1) << 20;

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

struct Best {
  double s = 1e30;
  void add(double t) { s = std::min(s, t); }
};

template <class F>
double timed(F fn) {
  auto t = Clock::now();
  fn();
  return seconds_since(t);
}

// Times fn() writing `path` as a new file, as every spill does (the old file's pages are freed
// before the clock starts).
template <class F>
double timed_fresh(const std::string& path, F fn) {
  std::filesystem::remove(path);
  return timed(fn);
}

// 1 MiB writes, as dd bs=1M.
void write_file(const std::string& path, std::span<const std::byte> bytes, bool sync) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  for (size_t off = 0; off < bytes.size();) {
    const ssize_t k = ::write(fd, bytes.data() + off, std::min(bytes.size() - off, kMiB));
    if (k <= 0) std::abort();
    off += k;
  }
  if (sync) ::fdatasync(fd);
  ::close(fd);
}

void read_file(const std::string& path, std::span<std::byte> out) {
  int fd = ::open(path.c_str(), O_RDONLY);
  for (size_t off = 0; off < out.size();) {
    const ssize_t k = ::read(fd, out.data() + off, std::min(out.size() - off, kMiB));
    if (k <= 0) std::abort();
    off += k;
  }
  ::close(fd);
}

void sync_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  ::fdatasync(fd);
  ::close(fd);
}

// Runs dd with `args` (removing `fresh` first when given) and returns the seconds dd itself
// reports, so process start-up is not counted against the baseline.
double run_dd(const std::string& args, const std::string& fresh) {
  if (!fresh.empty()) std::filesystem::remove(fresh);
  const std::string cmd = "dd " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return 1e30;
  char line[512];
  double secs = 1e30;
  while (std::fgets(line, sizeof line, p) != nullptr) {
    // "N bytes (...) copied, 0.51 s, 1.0 GB/s"
    if (const char* c = std::strstr(line, "copied, ")) secs = std::strtod(c + 8, nullptr);
  }
  if (::pclose(p) != 0) {
    std::fprintf(stderr, "dd failed: %s\n", cmd.c_str());
    return 1e30;
  }
  return secs;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, spill_only = false;
  std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--spill-only") == 0) spill_only = true;
    if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
  }
  const size_t big = quick ? (64ull << 20) : (1ull << 30);
  const std::vector<size_t> spill_sizes = {size_t(64) << 20, quick ? size_t(64) << 20 : big};
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
  if (!spill_only) {  // the in-memory part
    // ---- put bandwidth -------------------------------------------------------------------------
    for (size_t n : {size_t(1) << 20, size_t(64) << 20, big}) {
      if (n > big) continue;
      const int reps = n >= (256u << 20) ? 3 : 10;
      {  // first touch of the segment's pages is not what we measure
        WritableObject w = s->create(ObjectId{0, 0, ++seq}, n, true).take();
        std::memset(w.data().data(), 0, n);
      }
      const double t_put = best_of(reps, [&] {
        const ObjectId id{0, 0, ++seq};
        WritableObject w = s->create(id, n, true).take();
        std::memcpy(w.data().data(), src.data(), n);
        w.seal();
        s->remove(id);
      });
      const double t_cpy = best_of(reps, [&] { std::memcpy(dst.data(), src.data(), n); });
      row("put bandwidth", human(n), n / t_put / 1e9, n / t_cpy / 1e9, "GB/s");
    }

    // ---- get latency
    // -----------------------------------------------------------------------------
    double base_ns = 0;
    for (size_t n : {size_t(1) << 10, size_t(1) << 20, size_t(64) << 20, big}) {
      const ObjectId id{0, 0, ++seq};
      {
        WritableObject w = s->create(id, n, true).take();
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
  }
  s.reset();

  // ---- spill and restore -----------------------------------------------------------------------
  // Every pair runs on the same directory with the same byte count, alternating Weft and the
  // baseline in each repetition (best of the repetitions). Without fdatasync: Weft never syncs a
  // spill file (it dies with the job), so the first pairs compare page-cache writes. With
  // fdatasync: Weft's spill followed by fdatasync of its file vs `dd conv=fdatasync`. Restores
  // read a file just written, so both sides read from the page cache (caches cannot be dropped
  // here). dd reads /dev/zero (no source memory traffic) while Weft reads the object from memory,
  // and dd of=/dev/null never writes memory while a restore fills the object: those dd figures
  // are the harder baselines; write()/read() of the same bytes and dd into /dev/shm (where the
  // store's segment lives) are the like-for-like ones.
  std::filesystem::create_directories(o.spill_dir);
  std::printf("\nspill directory %s\n", o.spill_dir.c_str());
  for (size_t n : spill_sizes) {
    const std::string h5 = o.spill_dir + "/bench.h5", raw = o.spill_dir + "/bench.raw",
                      ddf = o.spill_dir + "/bench.dd";
    const ObjectId id{0, 0, 1};
    const std::span<const std::byte> bytes(src.data(), n);
    const std::span<std::byte> out(dst.data(), n);
    const size_t mib = n >> 20;
    const int reps = n >= (256u << 20) ? 3 : 5;
    Best spill, spill_sync, wr, dd, dd_sync, restore, rd, dd_read, dd_shm;
    // Restores land in the node's shared segment (tmpfs): dd into a /dev/shm file moves the same
    // bytes through memory as a restore does, where dd to /dev/null never writes memory.
    const std::string shm_out = "/dev/shm/weft-store-bench-dd-" + std::to_string(::getpid());
    for (int r = 0; r < reps; ++r) {
      // The synced pair first, so that all three reads below find files in the same state:
      // written without a sync, as a spill file is.
      spill_sync.add(timed_fresh(h5, [&] {
        bool full = false;
        write_spill_file(h5, id, bytes, &full);
        sync_file(h5);
      }));
      dd_sync.add(run_dd(
          "if=/dev/zero of=" + ddf + " bs=1M count=" + std::to_string(mib) + " conv=fdatasync",
          ddf));
      spill.add(timed_fresh(h5, [&] {
        bool full = false;
        write_spill_file(h5, id, bytes, &full);
      }));
      wr.add(timed_fresh(raw, [&] { write_file(raw, bytes, false); }));
      dd.add(run_dd("if=/dev/zero of=" + ddf + " bs=1M count=" + std::to_string(mib), ddf));
      restore.add(timed([&] { read_spill_file(h5, id, out); }));
      rd.add(timed([&] { read_file(raw, out); }));
      dd_read.add(run_dd("if=" + ddf + " of=/dev/null bs=1M", ""));
      // notrunc: from the second repetition on dd overwrites pages that exist, as a restore into
      // a segment that has been used does.
      dd_shm.add(run_dd("if=" + ddf + " of=" + shm_out + " bs=1M conv=notrunc", ""));
    }
    const std::string sz = human(n);
    row("spill vs dd", sz, n / spill.s / 1e9, n / dd.s / 1e9, "GB/s");
    row("spill vs write()", sz, n / spill.s / 1e9, n / wr.s / 1e9, "GB/s");
    row("spill+sync vs dd sync", sz, n / spill_sync.s / 1e9, n / dd_sync.s / 1e9, "GB/s");
    row("restore vs dd >null", sz, n / restore.s / 1e9, n / dd_read.s / 1e9, "GB/s");
    row("restore vs dd >shm", sz, n / restore.s / 1e9, n / dd_shm.s / 1e9, "GB/s");
    row("restore vs read()", sz, n / restore.s / 1e9, n / rd.s / 1e9, "GB/s");
    for (const std::string& f : {h5, raw, ddf, shm_out}) std::filesystem::remove(f);
  }
  std::filesystem::remove_all(o.spill_dir);
  return 0;
}
