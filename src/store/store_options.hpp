// What a node store is asked to be (StoreOptions) and what it reports about itself (StoreStats).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace weft::store {

struct StoreOptions {
  std::string name;              // shm name, unique per job and node (the runtime gives it)
  size_t capacity = 0;           // bytes of object memory in the segment
  double spill_threshold = 0.8;  // primary bytes / capacity that starts spilling
  std::string spill_dir;         // per-job, per-node directory (created if missing)
  size_t spill_limit = 0;        // bytes on disk (spill + fallback); 0 = bounded by the disk
  std::chrono::milliseconds alloc_timeout{2000};  // how long create() waits before fallback
  // Slots in the object table (in memory, spilled and fallback objects all take one). The table
  // lives in the segment and cannot grow, so it is sized up front; ~72 B per slot (entry and
  // index).
  uint32_t max_objects = 65536;
  // Start the spill I/O thread (only meaningful for create()). Tests turn it off to pin down
  // eviction order without a concurrent spiller.
  bool spill_thread = true;
};

struct StoreStats {
  size_t capacity = 0;         // bytes of object memory
  size_t used = 0;             // bytes allocated in the segment (objects plus block headers)
  size_t primary_bytes = 0;    // primaries resident in memory (what the spill threshold reads)
  size_t secondary_bytes = 0;  // secondaries resident in memory
  size_t spilled_bytes = 0;    // bytes held in spill files
  size_t spilled_objects = 0;  // objects with a spill file
  size_t fallback_bytes = 0;   // bytes in file-backed fallback mappings
  size_t fallback_objects = 0;
  size_t num_objects = 0;        // objects in the table (any location, sealed or being written)
  uint64_t evictions = 0;        // secondaries dropped by LRU eviction
  uint64_t spills = 0;           // spill files written
  uint64_t restores = 0;         // objects read back from spill files
  uint64_t lock_recoveries = 0;  // times a dead lock holder was detected and repaired
};

}  // namespace weft::store
