// Repair after a process died holding the store lock (the robust mutex reported EOWNERDEAD).
// The dead holder may have stopped in the middle of any update, so everything derived is
// rebuilt from what is written first and changed last: allocator free lists from the block
// headers, the hash index and LRU lists from the entries, counters from the entries. Work that
// dead processes left half done (objects being written, spilled or restored) is undone, and
// blocks no live entry owns are freed.
#include <unistd.h>

#include <algorithm>
#include <unordered_set>

#include "common/check.hpp"
#include "common/log.hpp"
#include "store/allocator.hpp"
#include "store/node_store.hpp"
#include "store/object_table.hpp"
#include "store/segment_layout.hpp"
#include "store/spill_file.hpp"

namespace weft::store {

void NodeStore::repair(int32_t dead_pid) {
  // The lock holder is dying but may not be gone yet (its robust list is processed during
  // exit), so it is named dead explicitly; other processes are asked.
  auto gone = [&](int32_t pid) { return pid == dead_pid || !process_alive(pid); };
  SegmentHeader* h = hdr();
  ++h->lock_recoveries;
  h->sync.waiters = 0;  // a dead waiter's count is lost; live ones re-count as they wake
  Allocator a = alloc();
  WEFT_CHECK(a.rebuild()) << "object store " << name_
                          << ": block chain corrupted by a process that died holding the lock";
  ObjectTable t = table();
  t.rebuild();

  // Undo what dead processes were doing.
  for (uint32_t i = 0; i < t.capacity(); ++i) {
    Entry& en = t.at(int32_t(i));
    if (en.state == ObjectState::kFree || !gone(en.busy_pid)) continue;
    if (en.state == ObjectState::kCreating && en.busy_pid != 0) {
      en.flags |= kDoomed;  // its writer is gone: the object can never be sealed
      en.pins = 0;
    }
    if (en.flags & kSpilling) {
      en.flags &= ~kSpilling;
      ::unlink((spill_path(spill_dir_, en.id) + ".tmp").c_str());
    }
    if (en.flags & kRestoring) {
      en.flags &= ~kRestoring;
      en.pins = std::max(0, en.pins - 1);
      if (en.loc == Location::kSpilled) en.offset = 0;  // its half-read block is freed below
    }
    en.busy_pid = 0;
  }

  // Free blocks that no entry owns (a dead restorer's or a half-finished allocation's).
  std::unordered_set<uint64_t> owned;
  for (uint32_t i = 0; i < t.capacity(); ++i) {
    const Entry& en = t.at(int32_t(i));
    if (en.state == ObjectState::kFree) continue;
    if (en.loc == Location::kMemory || ((en.flags & kRestoring) && en.offset != 0)) {
      owned.insert(en.offset);
    }
  }
  size_t leaked = 0;
  for (uint64_t off : a.used_payloads()) {
    if (!owned.contains(off)) {
      a.free(off);
      ++leaked;
    }
  }

  // Recount.
  h->primary_bytes = h->secondary_bytes = h->spilled_bytes = h->spilled_objects = 0;
  h->fallback_bytes = h->fallback_objects = 0;
  for (uint32_t i = 0; i < t.capacity(); ++i) {
    const Entry& en = t.at(int32_t(i));
    if (en.state == ObjectState::kFree) continue;
    if (en.loc == Location::kMemory || ((en.flags & kRestoring) && en.offset != 0)) {
      (en.primary ? h->primary_bytes : h->secondary_bytes) += en.size;
    }
    if (en.loc == Location::kFallback) {
      h->fallback_bytes += en.size;
      ++h->fallback_objects;
    }
    if (en.flags & kHasSpillCopy) {
      h->spilled_bytes += en.size;
      ++h->spilled_objects;
    }
  }

  // Finally drop objects whose writer died.
  for (uint32_t i = 0; i < t.capacity(); ++i) {
    const Entry& en = t.at(int32_t(i));
    if (en.state == ObjectState::kCreating && (en.flags & kDoomed) && en.pins == 0) {
      finalize(int32_t(i));
    }
  }
  if (h->spiller_pid != 0 && gone(h->spiller_pid)) h->spiller_pid = 0;
  WEFT_LOG(Warn) << "object store " << name_ << ": repaired after a dead lock holder (" << t.count()
                 << " objects, " << leaked << " orphan blocks freed)";
}

}  // namespace weft::store
