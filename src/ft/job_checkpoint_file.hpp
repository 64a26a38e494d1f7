// One whole-job checkpoint = one HDF5 file holding named entries a driver chose to save: objects
// (the serialized bytes of a value) and actors (their serialized state, class and the call count
// it reflects). It is an actor checkpoint file (checkpoint_file.hpp) of the reserved class
// kJobCheckpointClass whose state is the entries' table, so it shares that file's guarantees: the
// write is atomic and durable (temporary, fsync, rename, directory fsync), and the read checks
// the HDF5 metadata, the build id and a checksum over every byte before anything is trusted.
// A damaged, truncated, foreign or other-build file is a CheckpointError naming the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace weft::ft {

// The class name a job checkpoint file carries, so an actor checkpoint is never read as one (and
// a job checkpoint never as an actor's state).
inline constexpr const char* kJobCheckpointClass = "weft.job_checkpoint";

struct JobCheckpointEntry {
  enum class Kind : uint8_t { kObject = 1, kActor = 2 };
  Kind kind = Kind::kObject;
  std::string name;         // unique within the file, per kind
  std::string type_name;    // an object's value type or an actor's class, as the runtime names it
  uint64_t seq = 0;         // an actor's completed calls when its state was taken; 0 for objects
  std::vector<char> bytes;  // the serialized value or state
};

struct JobCheckpointContents {
  uint64_t epoch = 0;  // which checkpoint of the job this is (1 for the first, then 2, ...)
  std::vector<JobCheckpointEntry> entries;

  // The entry of that kind and name, or nullptr.
  const JobCheckpointEntry* find(JobCheckpointEntry::Kind kind, const std::string& name) const;
};

// `<dir>/job.ckpt.h5`: one file per job directory, replaced as a whole by each checkpoint.
std::filesystem::path job_checkpoint_path(const std::filesystem::path& dir);

// Writes `contents` to `file` durably and atomically (see write_checkpoint). Two entries of the
// same kind and name are a CheckpointError (kWriteFailed) before anything is written.
void write_job_checkpoint(const std::filesystem::path& file, const std::string& build_id,
                          const JobCheckpointContents& contents);

// Reads `file` back, every check of read_checkpoint first (kMissing when there is no file), then
// the entries' table: a table that does not parse is kCorrupted naming the file and the offset.
JobCheckpointContents read_job_checkpoint(const std::filesystem::path& file,
                                          const std::string& build_id);

}  // namespace weft::ft
