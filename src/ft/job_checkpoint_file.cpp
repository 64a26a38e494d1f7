#include "ft/job_checkpoint_file.hpp"

#include <cstring>
#include <set>
#include <span>
#include <utility>

#include "ft/checkpoint_file.hpp"
#include "weft/errors.hpp"

namespace weft::ft {
namespace {

using Kind = CheckpointError::Kind;

// The table inside the checkpoint's state bytes, little-endian on every platform Weft builds for:
//   u32 magic, u32 table version, u64 entry count, then per entry
//   u8 kind, u64 name length, name, u64 type length, type, u64 seq, u64 size, bytes.
constexpr uint32_t kMagic = 0x4b434a57;  // "WJCK"
constexpr uint32_t kTableVersion = 1;
constexpr const char* kAdviceDamaged =
    "The file was damaged after it was written; restore it from a copy, or delete it to start "
    "the job from scratch";

void put_u64(std::vector<char>& out, uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  out.insert(out.end(), b, b + 8);
}
void put_u32(std::vector<char>& out, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}
void put_bytes(std::vector<char>& out, const char* p, size_t n) {
  put_u64(out, n);
  out.insert(out.end(), p, p + n);
}

// Reads the table with every length checked against what is left, so a well-formed HDF5 file
// whose state is not a table (checksummed but foreign) fails cleanly instead of allocating.
class TableReader {
 public:
  TableReader(const std::vector<char>& b, const std::string& file) : b_(b), file_(file) {}
  template <class T>
  T fixed(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, b_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::vector<char> bytes(const char* what) {
    const uint64_t n = fixed<uint64_t>(what);
    need(n, what);
    std::vector<char> v(b_.begin() + static_cast<ptrdiff_t>(at_),
                        b_.begin() + static_cast<ptrdiff_t>(at_ + n));
    at_ += n;
    return v;
  }
  std::string str(const char* what) {
    const auto v = bytes(what);
    return {v.begin(), v.end()};
  }
  bool done() const { return at_ == b_.size(); }
  [[noreturn]] void bad(const std::string& why) const {
    throw CheckpointError(
        Kind::kCorrupted, file_,
        "its job checkpoint table is malformed at byte " + std::to_string(at_) + ": " + why,
        kAdviceDamaged);
  }

 private:
  void need(uint64_t n, const char* what) const {
    if (n > b_.size() - at_) {
      bad(std::string(what) + " needs " + std::to_string(n) + " bytes, " +
          std::to_string(b_.size() - at_) + " are left");
    }
  }
  const std::vector<char>& b_;
  const std::string& file_;
  size_t at_ = 0;
};

}  // namespace

const JobCheckpointEntry* JobCheckpointContents::find(JobCheckpointEntry::Kind kind,
                                                      const std::string& name) const {
  for (const auto& e : entries) {
    if (e.kind == kind && e.name == name) return &e;
  }
  return nullptr;
}

std::filesystem::path job_checkpoint_path(const std::filesystem::path& dir) {
  return dir / "job.ckpt.h5";
}

void write_job_checkpoint(const std::filesystem::path& file, const std::string& build_id,
                          const JobCheckpointContents& contents) {
  std::set<std::pair<uint8_t, std::string>> seen;
  size_t total = 16;
  for (const auto& e : contents.entries) {
    if (!seen.emplace(static_cast<uint8_t>(e.kind), e.name).second) {
      throw CheckpointError(
          Kind::kWriteFailed, file.string(),
          "cannot write the job checkpoint: two " +
              std::string(e.kind == JobCheckpointEntry::Kind::kActor ? "actors" : "objects") +
              " are named '" + e.name + "'",
          "Give every saved object and actor its own name");
    }
    total += 1 + 32 + e.name.size() + e.type_name.size();
  }
  // The table's small fields go into `meta`, one run per entry, and the entries' bytes are
  // written from their own buffers: a large object is not copied before the write.
  std::vector<char> meta;
  meta.reserve(total);
  std::vector<size_t> ends;  // where each entry's fields end in `meta`
  put_u32(meta, kMagic);
  put_u32(meta, kTableVersion);
  put_u64(meta, contents.entries.size());
  for (const auto& e : contents.entries) {
    meta.push_back(static_cast<char>(e.kind));
    put_bytes(meta, e.name.data(), e.name.size());
    put_bytes(meta, e.type_name.data(), e.type_name.size());
    put_u64(meta, e.seq);
    put_u64(meta, e.bytes.size());
    ends.push_back(meta.size());
  }
  std::vector<std::span<const char>> parts;
  size_t from = 0;
  for (size_t i = 0; i < contents.entries.size(); ++i) {
    parts.emplace_back(meta.data() + from, ends[i] - from);
    parts.emplace_back(contents.entries[i].bytes.data(), contents.entries[i].bytes.size());
    from = ends[i];
  }
  if (contents.entries.empty()) parts.emplace_back(meta.data(), meta.size());
  write_checkpoint(file, CheckpointHeader{kJobCheckpointClass, build_id, contents.epoch},
                   std::span<const std::span<const char>>(parts));
}

JobCheckpointContents read_job_checkpoint(const std::filesystem::path& file,
                                          const std::string& build_id) {
  const std::string name = file.string();
  Checkpoint ck = read_checkpoint(file, kJobCheckpointClass, build_id);
  TableReader r(ck.state, name);
  if (r.fixed<uint32_t>("the magic number") != kMagic) r.bad("it does not start with 'WJCK'");
  const uint32_t version = r.fixed<uint32_t>("the table version");
  if (version != kTableVersion) {
    throw CheckpointError(Kind::kWrongBuild, name,
                          "its job checkpoint table has version " + std::to_string(version) +
                              ", this build reads version " + std::to_string(kTableVersion),
                          "Restore it with the build that wrote it");
  }
  JobCheckpointContents out;
  out.epoch = ck.header.seq;
  const uint64_t n = r.fixed<uint64_t>("the entry count");
  // Each entry takes at least 33 bytes: a count beyond that is damage, not an allocation.
  if (n > ck.state.size() / 33) r.bad(std::to_string(n) + " entries cannot fit in the table");
  out.entries.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    JobCheckpointEntry e;
    const auto kind = r.fixed<uint8_t>("an entry's kind");
    if (kind != 1 && kind != 2)
      r.bad("entry " + std::to_string(i) + " has unknown kind " + std::to_string(kind));
    e.kind = static_cast<JobCheckpointEntry::Kind>(kind);
    e.name = r.str("an entry's name");
    e.type_name = r.str("an entry's type");
    e.seq = r.fixed<uint64_t>("an entry's seq");
    e.bytes = r.bytes("an entry's bytes");
    out.entries.push_back(std::move(e));
  }
  if (!r.done()) r.bad("bytes follow the last entry");
  return out;
}

}  // namespace weft::ft
