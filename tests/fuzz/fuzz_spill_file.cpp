// Spill files (src/store/spill_file.hpp): read_spill_file on bytes written to a file, as the
// store restores a spilled object. Input: u32 expected size (the store knows it from its object
// table; masked to 1 MiB), the expected ObjectId (16 bytes), then the file's bytes.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_harness.hpp"
#include "store/spill_file.hpp"

namespace {

using namespace weft;

constexpr size_t kPrefix = sizeof(uint32_t) + sizeof(ObjectId);

const fuzz::ScratchDir& scratch() {
  static const fuzz::ScratchDir dir("spill");
  return dir;
}

void decode(const uint8_t* data, size_t size) {
  if (size < kPrefix) return;
  uint32_t want = 0;
  ObjectId id;
  std::memcpy(&want, data, sizeof want);
  std::memcpy(&id, data + sizeof want, sizeof id);
  want &= (1u << 20) - 1;
  const std::string path = scratch().file("spill.h5");
  fuzz::write_file(path, data + kPrefix, size - kPrefix);
  std::vector<std::byte> out(want);
  store::read_spill_file(path, id, out);
}

// ---- seeds: write_spill_file's files ---------------------------------------------------------

fuzz::Seed seed(const std::string& name, const ObjectId& id, size_t n) {
  std::vector<std::byte> value(n);
  for (size_t i = 0; i < n; ++i) value[i] = std::byte(i * 131 + 7);
  const std::string path = scratch().file("seed.h5");
  bool full = false;
  store::write_spill_file(path, id, value, &full);
  const std::vector<char> file = fuzz::read_file(path);
  std::vector<char> b(kPrefix);
  const uint32_t want = static_cast<uint32_t>(n);
  std::memcpy(b.data(), &want, sizeof want);
  std::memcpy(b.data() + sizeof want, &id, sizeof id);
  b.insert(b.end(), file.begin(), file.end());
  return {name, std::move(b)};
}

std::vector<fuzz::Seed> seeds() {
  return {
      seed("empty", ObjectId{0, 0, 1}, 0),
      seed("one_byte", ObjectId{1, 0, 2}, 1),
      seed("small", ObjectId{2, 0, 3}, 100),
      seed("kib", ObjectId{3, 0, 1ull << 40}, 1024),
      seed("four_kib", ObjectId{7, 2, 99}, 4000),
  };
}

}  // namespace

WEFT_FUZZ_TARGET(seeds, decode)
