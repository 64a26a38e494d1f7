// Actor checkpoint figures, each beside a baseline measured in the same run, same directory,
// same bytes, the two sides alternating and the best of several runs kept:
//   durable write   write_checkpoint (HDF5 temporary, checksum, fsync, rename, fsync of the
//                     directory)
//                     vs the same protocol by hand around plain write() in 1 MiB calls
//                       (temporary, fsync, rename, fsync of the directory): what HDF5, the
//                       checksum and the attributes cost
//                     vs plain write() in 1 MiB calls, no sync: what durability costs here
//   read            read_checkpoint (checks, a new vector, checksum), from the page cache (caches
//                     cannot be dropped on these machines)
//                     vs read() into memory already faulted in: the least a read can cost
//                     vs read() into a new std::vector, as a restore needs: what the format,
//                       the checks and the checksum cost
//   job checkpoint  write_job_checkpoint / read_job_checkpoint of one 256 MiB object entry (the
//                     table is built in memory and written as one checkpoint; read parses it
//                     into new vectors) vs the by-hand durable write() / read() into a new vector
// Usage: weft_ft_bench [--quick] [--dir DIR]   (DIR: $TMPDIR or /tmp)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ft/checkpoint_file.hpp"
#include "ft/job_checkpoint_file.hpp"

using namespace weft::ft;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kMiB = size_t(1) << 20;

std::string human(size_t b) {
  char buf[32];
  if (b >= (1ull << 30))
    std::snprintf(buf, sizeof buf, "%zu GiB", b >> 30);
  else
    std::snprintf(buf, sizeof buf, "%zu MiB", b >> 20);
  return buf;
}

void row(const char* what, const std::string& size, double value, double base) {
  std::printf("%-34s %8s %10.2f %10.2f %-5s %7.1f%%\n", what, size.c_str(), value, base, "GB/s",
              100.0 * value / base);
}

std::vector<char> source(size_t n) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t x = i * 0x9E3779B97F4A7C15ull;
    std::memcpy(v.data() + i, &x, std::min<size_t>(8, n - i));
  }
  return v;
}

template <class F>
double timed(F fn) {
  const auto t = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void die(const char* what, const std::string& path) {
  std::fprintf(stderr, "%s %s: %s\n", what, path.c_str(), std::strerror(errno));
  std::exit(1);
}

// The baselines: a new file, write() in 1 MiB calls; `durable`: written as a temporary,
// fsynced, renamed into place and the directory fsynced, as write_checkpoint does.
void write_file(const std::string& path, const std::vector<char>& bytes, bool durable) {
  const std::string tmp = durable ? path + ".tmp" : path;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) die("open", tmp);
  for (size_t off = 0; off < bytes.size();) {
    const ssize_t k = ::write(fd, bytes.data() + off, std::min(bytes.size() - off, kMiB));
    if (k <= 0) die("write", tmp);
    off += k;
  }
  if (durable && ::fsync(fd) != 0) die("fsync", tmp);
  ::close(fd);
  if (!durable) return;
  if (::rename(tmp.c_str(), path.c_str()) != 0) die("rename", tmp);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || ::fsync(dfd) != 0) die("fsync", dir);
  ::close(dfd);
}

void read_file(const std::string& path, char* out, size_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("open", path);
  for (size_t off = 0; off < n;) {
    const ssize_t k = ::read(fd, out + off, std::min(n - off, kMiB));
    if (k <= 0) die("read", path);
    off += k;
  }
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string dir_arg = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir_arg = argv[++i];
  }
  const std::filesystem::path dir =
      std::filesystem::path(dir_arg) / ("weft-ft-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string ckpt = checkpoint_path(dir, "bench").string();
  const std::string plain = (dir / "plain.bin").string();
  std::vector<size_t> sizes = {kMiB, 64 * kMiB};
  if (!quick) sizes.push_back(1024 * kMiB);

  std::printf("checkpoint files in %s\n", dir.c_str());
  std::printf("%-34s %8s %10s %10s %-5s %8s\n", "measure", "size", "weft", "baseline", "unit",
              "ratio");
  for (const size_t n : sizes) {
    const int reps = n >= 512 * kMiB ? 3 : n >= 64 * kMiB ? 5 : 20;
    const auto src = source(n);
    std::vector<char> back(n);
    std::memset(back.data(), 1, n);  // fault the baseline's pages in, as the reader's will be
    double t_ckpt = 1e30, t_sync = 1e30, t_nosync = 1e30, t_read = 1e30, t_plain_read = 1e30,
           t_new_read = 1e30;
    uint64_t seq = 0;
    for (int r = 0; r < reps; ++r) {
      // Every side writes a new file: removing the old one first keeps the freeing of its pages
      // out of the clock on both sides.
      std::filesystem::remove(ckpt);
      t_ckpt = std::min(t_ckpt, timed([&] {
                          write_checkpoint(ckpt, {"Bench", "bench-build", ++seq}, src);
                        }));
      std::filesystem::remove(plain);
      t_sync = std::min(t_sync, timed([&] { write_file(plain, src, true); }));
      std::filesystem::remove(plain);
      t_nosync = std::min(t_nosync, timed([&] { write_file(plain, src, false); }));
      t_read = std::min(t_read, timed([&] {
                          const Checkpoint c = read_checkpoint(ckpt, "Bench", "bench-build");
                          if (c.state.size() != n) std::abort();
                        }));
      t_plain_read = std::min(t_plain_read, timed([&] { read_file(plain, back.data(), n); }));
      t_new_read = std::min(t_new_read, timed([&] {
                              std::vector<char> fresh(n);
                              read_file(plain, fresh.data(), n);
                            }));
    }
    row("durable write vs by hand (write())", human(n), n / t_ckpt / 1e9, n / t_sync / 1e9);
    row("durable write vs write(), no sync", human(n), n / t_ckpt / 1e9, n / t_nosync / 1e9);
    row("read vs read() into faulted memory", human(n), n / t_read / 1e9, n / t_plain_read / 1e9);
    row("read vs read() into a new vector", human(n), n / t_read / 1e9, n / t_new_read / 1e9);
  }
  {
    const size_t n = 256 * kMiB;
    const std::string job = job_checkpoint_path(dir).string();
    JobCheckpointContents c;
    c.entries.push_back({JobCheckpointEntry::Kind::kObject, "result", "bytes", 0, source(n)});
    double t_w = 1e30, t_sync = 1e30, t_r = 1e30, t_new_read = 1e30;
    for (int r = 0; r < 5; ++r) {
      std::filesystem::remove(job);
      c.epoch = r + 1;
      t_w = std::min(t_w, timed([&] { write_job_checkpoint(job, "bench-build", c); }));
      std::filesystem::remove(plain);
      t_sync = std::min(t_sync, timed([&] { write_file(plain, c.entries[0].bytes, true); }));
      t_r = std::min(t_r, timed([&] {
                       const auto back = read_job_checkpoint(job, "bench-build");
                       if (back.entries.at(0).bytes.size() != n) std::abort();
                     }));
      t_new_read = std::min(t_new_read, timed([&] {
                              std::vector<char> fresh(n);
                              read_file(plain, fresh.data(), n);
                            }));
    }
    row("job ckpt write vs by hand (write())", human(n), n / t_w / 1e9, n / t_sync / 1e9);
    row("job ckpt read vs read() new vector", human(n), n / t_r / 1e9, n / t_new_read / 1e9);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
