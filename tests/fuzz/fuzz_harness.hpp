// What every fuzz target shares: the verdict on one input and the --make-corpus mode.
//
// A target is two functions over bytes: `decode` runs the real decoders on them (throwing what
// they throw), `seeds` makes named inputs with the real encoders. On fuzzed bytes a decoder may
// only throw weft::Error (each target's typed error derives from it) with a message that says
// what was wrong; anything else that escapes (another exception type, which ends in
// std::terminate), a crash, a sanitizer report, an allocation past -rss_limit_mb or a hang past
// -timeout is a finding. Targets assert their own invariants with WEFT_FUZZ_CHECK.
//
//   weft_fuzz_<name> --make-corpus=DIR   writes the seeds to DIR/seed-<name>, after checking
//                                        that each decodes without error, and exits
//   weft_fuzz_<name> [libFuzzer flags] DIR...   fuzzes (libFuzzer's own main)
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "common/log.hpp"
#include "weft/errors.hpp"

namespace weft::fuzz {

struct Seed {
  std::string name;
  std::vector<char> bytes;
};
using SeedsFn = std::vector<Seed> (*)();
using DecodeFn = void (*)(const uint8_t* data, size_t size);

[[noreturn]] inline void finding(const char* file, int line, const char* what) {
  std::fprintf(stderr, "fuzz finding at %s:%d: %s\n", file, line, what);
  std::abort();
}
#define WEFT_FUZZ_CHECK(cond) \
  ((cond) ? (void)0 : ::weft::fuzz::finding(__FILE__, __LINE__, "check failed: " #cond))

// A directory of this process's own for targets that read files (on tmpfs when there is one),
// removed at exit.
class ScratchDir {
 public:
  explicit ScratchDir(const char* tag) {
    const char* tmp = std::getenv("TMPDIR");
    const std::string base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp ? tmp : "/tmp";
    std::string tmpl = base + "/weft-fuzz-" + tag + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) finding(__FILE__, __LINE__, "mkdtemp failed");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const char* name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const void* p, size_t n) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
  out.close();
  if (!out) finding(__FILE__, __LINE__, ("cannot write " + path).c_str());
}

inline std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && !in) finding(__FILE__, __LINE__, ("cannot read " + path).c_str());
  return b;
}

// One input: the typed errors are the decoders' answer to bad bytes; they must say why.
inline void run_one(DecodeFn decode, const uint8_t* data, size_t size) {
  try {
    decode(data, size);
  } catch (const weft::Error& e) {
    if (e.what() == nullptr || e.what()[0] == '\0') finding(__FILE__, __LINE__, "empty error");
  }
}

inline int make_corpus(const std::string& dir, SeedsFn seeds, DecodeFn decode) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  int bad = 0;
  for (const Seed& s : seeds()) {
    std::fprintf(stderr, "seed %s: %zu bytes\n", s.name.c_str(), s.bytes.size());
    try {
      decode(reinterpret_cast<const uint8_t*>(s.bytes.data()), s.bytes.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "seed %s does not decode: %s\n", s.name.c_str(), e.what());
      ++bad;
      continue;
    }
    const std::string path = dir + "/seed-" + s.name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(s.bytes.data(), static_cast<std::streamsize>(s.bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      ++bad;
    }
  }
  return bad == 0 ? 0 : 1;
}

// libFuzzer calls this before it reads its flags. Quiets the runtime's logger (a malformed frame
// or message is logged at error level, the lowest: below it nothing is printed), unless
// WEFT_FUZZ_LOG is set, and runs --make-corpus=DIR.
inline int initialize(int* argc, char*** argv, SeedsFn seeds, DecodeFn decode) {
  if (std::getenv("WEFT_FUZZ_LOG") == nullptr) log::set_level(static_cast<log::Level>(-1));
  for (int i = 1; i < *argc; ++i) {
    const char* a = (*argv)[i];
    constexpr const char kFlag[] = "--make-corpus=";
    if (std::strncmp(a, kFlag, sizeof kFlag - 1) == 0) {
      std::exit(make_corpus(a + sizeof kFlag - 1, seeds, decode));
    }
  }
  return 0;
}

}  // namespace weft::fuzz

// Defines the two entry points libFuzzer looks for.
#define WEFT_FUZZ_TARGET(seeds_fn, decode_fn)                                      \
  extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {                   \
    return ::weft::fuzz::initialize(argc, argv, seeds_fn, decode_fn);              \
  }                                                                                \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {        \
    ::weft::fuzz::run_one(decode_fn, data, size);                                  \
    return 0;                                                                      \
  }
