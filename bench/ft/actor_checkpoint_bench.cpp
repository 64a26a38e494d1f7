// An actor's checkpoint through the runtime's path (core::ActorCheckpointer: the class's
// serialize into a Buffer, the state's layout, src/ft's durable write; restore: read, checks,
// load into a constructed object) beside plain write()/read() of the same bytes in the same run,
// same directory, the sides alternating, best of several:
//   write    ActorCheckpointer::write   vs write() in 1 MiB calls + fsync (durable by hand)
//                                       vs write() in 1 MiB calls, no sync
//   restore  ActorCheckpointer::restore vs read() into a new std::vector
// Usage: weft_actor_ckpt_bench [--quick] [--dir DIR]   (DIR: $TMPDIR or /tmp)
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

#include "core/actor_checkpoints.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMiB = size_t(1) << 20;

// An actor whose state is one large vector (Boost path: a serialize member).
struct Big {
  std::vector<char> data;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& data;
  }
};

template <class F>
double timed(F fn) {
  const auto t = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void plain_write(const std::string& path, const std::vector<char>& b, bool sync) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::exit(1);
  for (size_t off = 0; off < b.size();) {
    const ssize_t k = ::write(fd, b.data() + off, std::min(b.size() - off, kMiB));
    if (k <= 0) std::exit(1);
    off += static_cast<size_t>(k);
  }
  if (sync) ::fsync(fd);
  ::close(fd);
}

std::vector<char> plain_read(const std::string& path, size_t n) {
  std::vector<char> v(n);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) std::exit(1);
  for (size_t off = 0; off < n;) {
    const ssize_t k = ::read(fd, v.data() + off, std::min(n - off, kMiB));
    if (k <= 0) std::exit(1);
    off += static_cast<size_t>(k);
  }
  ::close(fd);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
  }
  const std::filesystem::path d =
      std::filesystem::path(dir) / ("weft-actor-ckpt-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(d);
  weft::detail::ClassEntry ce;
  ce.name = "Big";
  ce.save_state = &weft::detail::save_actor_state<Big>;
  ce.load_state = &weft::detail::load_actor_state<Big>;
  std::printf("%-44s %8s %10s %10s %7s\n", "measure (GB/s)", "size", "weft", "baseline", "ratio");
  for (size_t mib : quick ? std::vector<size_t>{1, 64} : std::vector<size_t>{1, 64, 256}) {
    const size_t n = mib * kMiB;
    Big big;
    big.data.resize(n);
    for (size_t i = 0; i < n; ++i) big.data[i] = static_cast<char>(i * 131 + (i >> 12));
    const int reps = mib >= 64 ? 3 : 10;
    weft::core::ActorCheckpointer ck(d / "big.ckpt.h5", "Big", &ce,
                                     weft::core::CheckpointPolicy{1});
    double w = 1e9, wd = 1e9, wn = 1e9, r = 1e9, rb = 1e9;
    for (int k = 0; k < reps; ++k) {
      ck.note_call(0, static_cast<uint64_t>(k));
      w = std::min(w, timed([&] { ck.write(&big); }));
      wd = std::min(wd, timed([&] { plain_write((d / "plain.bin").string(), big.data, true); }));
      wn = std::min(wn, timed([&] { plain_write((d / "plain.bin").string(), big.data, false); }));
      weft::core::ActorCheckpointer rd(d / "big.ckpt.h5", "Big", &ce, {});
      Big back;
      r = std::min(r, timed([&] {
                     if (!rd.restore(&back)) std::exit(1);
                   }));
      if (back.data != big.data) {
        std::fprintf(stderr, "restored state differs\n");
        return 1;
      }
      rb = std::min(rb, timed([&] {
                      auto v = plain_read((d / "plain.bin").string(), n);
                      if (v.size() != n) std::exit(1);
                    }));
    }
    auto row = [&](const char* what, double t, double base) {
      std::printf("%-44s %5zu MiB %10.2f %10.2f %6.1f%%\n", what, mib, n / t / 1e9, n / base / 1e9,
                  100.0 * base / t);
    };
    row("actor checkpoint write vs write()+fsync", w, wd);
    row("actor checkpoint write vs write(), no sync", w, wn);
    row("actor restore vs read() into a new vector", r, rb);
  }
  std::filesystem::remove_all(d);
  return 0;
}
