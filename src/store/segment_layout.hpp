// What lies in the node's shared segment, in order: this header (sync, allocator and table
// state, the shared configuration, counters), the entry array, the hash index, then the object
// region. Every rank reads the configuration from here, so all ranks of a node agree on it.
#pragma once

#include <cstdint>

#include "store/allocator.hpp"
#include "store/object_table.hpp"
#include "store/robust_lock.hpp"

namespace weft::store {

inline constexpr uint64_t kSegmentMagic = 0x5745465453544f52ull;  // "WEFTSTOR"
inline constexpr uint32_t kLayoutVersion = 1;
inline constexpr uint64_t kPage = 4096;

struct SegmentHeader {
  uint64_t magic;
  uint32_t version;
  int32_t creator_pid;
  uint64_t segment_size;
  uint64_t entries_offset;
  uint64_t index_offset;

  SharedSync sync;
  AllocatorState alloc;
  TableState table;

  // Configuration shared by every rank of the node.
  uint64_t capacity;
  double spill_threshold;
  uint64_t spill_limit;
  int64_t alloc_timeout_ms;
  char spill_dir[1024];

  // Counters (bytes unless named otherwise).
  uint64_t primary_bytes;    // resident primaries, being written or sealed
  uint64_t secondary_bytes;  // resident secondaries
  uint64_t spilled_bytes;    // spill files, including ones being written
  uint64_t spilled_objects;  // complete spill files
  uint64_t fallback_bytes;
  uint64_t fallback_objects;
  uint64_t evictions, spills, restores, lock_recoveries;

  // Spill coordination.
  int32_t spiller_pid;           // process running the I/O thread, 0 = none
  uint32_t spill_stalled;        // the last spill attempt failed (limit or I/O error)
  int64_t stalled_until_ns;      // the I/O thread's back-off after a failure
  int64_t room_wanted_until_ns;  // a writer waits for room until then (CLOCK_MONOTONIC)
  char spill_error[512];         // why the last spill attempt failed
};

}  // namespace weft::store
