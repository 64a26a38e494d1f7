// One actor checkpoint = one HDF5 file: a 1-D dataset "state" of the actor's serialized bytes and,
// on the root group, the attributes that say whose state it is (class name, build id, the call
// sequence number it reflects, the state's size and checksum, the format version). Writes are
// durable and atomic: a crash or a full disk at any point leaves the previous file as it was.
// Reads check everything before trusting anything and fail with a CheckpointError that names the
// file and the reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace weft::ft {

struct CheckpointHeader {
  std::string class_name;  // the actor's class, as the runtime names it
  std::string build_id;    // which build of the program wrote it (see build_id.hpp)
  uint64_t seq = 0;        // calls completed when the state was taken
};

struct Checkpoint {
  CheckpointHeader header;
  std::vector<char> state;
};

// The file of the actor `actor_key` (its name, or its id for an unnamed actor) in `dir`:
// `<dir>/<key>.ckpt.h5`, the key with every byte outside [A-Za-z0-9_-] written as %XX (so keys
// never escape `dir`, and two keys never share a file). One file per actor, replaced as a whole
// by each write: the latest checkpoint is the one at this path, found without scanning `dir`.
std::filesystem::path checkpoint_path(const std::filesystem::path& dir, std::string_view actor_key);

// Writes `state` to `file` durably: into a temporary `<file>.tmp.<host>.<pid>.<n>` beside it
// (HDF5 flush, fsync), renamed over `file`, then the directory fsynced. Returns once the checkpoint
// survives a crash of the process or of the machine. On failure removes the temporary, leaves
// any previous `file` untouched and throws CheckpointError (kDiskFull when the disk or the quota
// is full, else kWriteFailed) naming the file and the system's reason.
void write_checkpoint(const std::filesystem::path& file, const CheckpointHeader& header,
                      std::span<const char> state);
// The same, the state being the concatenation of `state`'s parts in order (written from the
// parts' own memory; only a 1 MiB slab that spans two parts is copied).
void write_checkpoint(const std::filesystem::path& file, const CheckpointHeader& header,
                      std::span<const std::span<const char>> state);

// Reads `file` back, checking in order: it exists, is HDF5, opens (not truncated, metadata
// intact: HDF5 checksums it), has every attribute, is of `expected_class`, then of
// `expected_build`, its dataset's size agrees with its attribute and fits in the file (checked
// before anything is allocated), and the bytes match their checksum. Any failure is a
// CheckpointError naming the file, the reason and what to do; HDF5 prints nothing.
Checkpoint read_checkpoint(const std::filesystem::path& file, std::string_view expected_class,
                           std::string_view expected_build);

// Removes the temporaries that writers of `file` left when they crashed mid-write (they never
// shadow `file`, but hold disk space). Call it only when no writer of `file` can be running,
// e.g. when restarting the actor. Returns how many were removed.
size_t remove_checkpoint_temporaries(const std::filesystem::path& file);

}  // namespace weft::ft
