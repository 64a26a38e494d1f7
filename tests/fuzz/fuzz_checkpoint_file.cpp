// Actor checkpoint files (src/ft/checkpoint_file.hpp): read_checkpoint on bytes written to a
// file, as a restarting actor reads its last checkpoint. Input: the file's bytes; the reader
// expects class "fz::Counter" and build "fuzz-build-1" (the seeds' writer used those).
#include <string>
#include <vector>

#include "ft/checkpoint_file.hpp"
#include "fuzz_harness.hpp"

namespace {

using namespace weft;

constexpr const char* kClass = "fz::Counter";
constexpr const char* kBuild = "fuzz-build-1";

const fuzz::ScratchDir& scratch() {
  static const fuzz::ScratchDir dir("ckpt");
  return dir;
}

void decode(const uint8_t* data, size_t size) {
  const std::string path = scratch().file("actor.ckpt.h5");
  fuzz::write_file(path, data, size);
  const ft::Checkpoint c = ft::read_checkpoint(path, kClass, kBuild);
  WEFT_FUZZ_CHECK(c.header.class_name == kClass && c.header.build_id == kBuild);
}

// ---- seeds: write_checkpoint's files ---------------------------------------------------------

fuzz::Seed seed(const std::string& name, uint64_t seq, size_t n) {
  std::vector<char> state(n);
  for (size_t i = 0; i < n; ++i) state[i] = char(i * 37 + 1);
  const std::string path = scratch().file("seed.ckpt.h5");
  ft::write_checkpoint(path, ft::CheckpointHeader{kClass, kBuild, seq}, state);
  const std::vector<char> file = fuzz::read_file(path);
  return {name, std::move(file)};
}

std::vector<fuzz::Seed> seeds() {
  return {
      seed("empty_state", 0, 0),
      seed("one_byte", 1, 1),
      seed("small", 12, 100),
      seed("kib", 1ull << 33, 1024),
      seed("four_kib", 77, 4000),
  };
}

}  // namespace

WEFT_FUZZ_TARGET(seeds, decode)
