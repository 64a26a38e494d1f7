// Making room for an object: allocate; else evict unpinned secondaries, least recently used
// first; else wait (bounded by alloc_timeout) for the spill I/O thread to move primaries to
// disk; else fall back to a file-backed mapping. Every step is bounded, so create() never
// deadlocks, and a full disk or spill_limit ends in ObjectStoreFullError.
#include <unistd.h>

#include <algorithm>

#include "common/check.hpp"
#include "common/log.hpp"
#include "store/allocator.hpp"
#include "store/node_store.hpp"
#include "store/object_table.hpp"
#include "store/robust_lock.hpp"
#include "store/segment_layout.hpp"
#include "store/spill_file.hpp"
#include "weft/errors.hpp"

namespace weft::store {

NodeStore::Placement NodeStore::make_room(SegmentLock& lk, const ObjectId& id, uint64_t size,
                                          bool primary) {
  return make_room(lk, id, size, primary, monotonic_ns() + hdr()->alloc_timeout_ms * 1000000,
                   /*may_wait=*/true);
}

NodeStore::Placement NodeStore::make_room(SegmentLock& lk, const ObjectId& id, uint64_t size,
                                          bool primary, int64_t deadline, bool may_wait) {
  SegmentHeader* h = hdr();
  Allocator a = alloc();
  if (Allocator::block_bytes(size) <= a.region_size()) {
    for (;;) {
      if (auto off = a.allocate(size)) {
        const double threshold = h->spill_threshold * double(h->capacity);
        const bool was_below = double(h->primary_bytes) < threshold;
        (primary ? h->primary_bytes : h->secondary_bytes) += size;
        if (primary && was_below && double(h->primary_bytes) >= threshold) {
          lk.notify_all();  // crossing the threshold: wake the spiller now, not at its next poll
        }
        return Placement{false, false, *off};
      }
      if (evict_one_secondary()) continue;
      const int64_t now = monotonic_ns();
      if (now >= deadline || !spill_can_help()) break;
      h->room_wanted_until_ns = std::max(h->room_wanted_until_ns, deadline);
      lk.notify_all();
      if (!may_wait) return Placement{false, true, 0};
      lk.wait_for(std::chrono::nanoseconds(std::min<int64_t>(deadline - now, 10000000)));
    }
  }
  reserve_disk(id, size, fallback_path(spill_dir_, id));
  return Placement{true, false, 0};
}

bool NodeStore::evict_one_secondary() {
  ObjectTable t = table();
  for (int32_t e = t.lru_tail(false); e >= 0; e = t.at(e).lru_prev) {
    const Entry& en = t.at(e);
    if (en.state == ObjectState::kSealed && en.pins == 0 && en.loc == Location::kMemory &&
        !(en.flags & (kSpilling | kRestoring))) {
      WEFT_LOG(Debug) << "object store: evicting secondary " << en.id.str();
      finalize(e);
      ++hdr()->evictions;
      return true;
    }
  }
  return false;
}

bool NodeStore::spill_can_help() const {
  const SegmentHeader* h = hdr();
  if (!process_alive(h->spiller_pid) || h->spill_stalled) return false;
  ObjectTable t = table();
  for (int32_t e = t.lru_tail(true); e >= 0; e = t.at(e).lru_prev) {
    const Entry& en = t.at(e);
    if (en.flags & kSpilling) return true;  // room is on its way
    if (en.state == ObjectState::kSealed && en.pins == 0 && en.loc == Location::kMemory) {
      return true;
    }
  }
  return false;
}

void NodeStore::reserve_disk(const ObjectId& id, uint64_t size, const std::string& path) {
  SegmentHeader* h = hdr();
  const uint64_t on_disk = h->spilled_bytes + h->fallback_bytes;
  if (h->spill_limit != 0 && on_disk + size > h->spill_limit) {
    throw ObjectStoreFullError(
        "object store full: " + id.str() + " (" + std::to_string(size) +
        " bytes) fits neither in memory (capacity " + std::to_string(h->capacity) + ", used " +
        std::to_string(h->alloc.used) + ", primaries " + std::to_string(h->primary_bytes) +
        ") nor on disk under spill_limit " + std::to_string(h->spill_limit) + " (" +
        std::to_string(on_disk) + " bytes already in " + spill_dir_ + "; wanted " + path + ")");
  }
  h->fallback_bytes += size;
}

void NodeStore::drop_memory(int32_t e) {
  ObjectTable t = table();
  Entry& en = t.at(e);
  WEFT_CHECK(en.loc == Location::kMemory);
  t.lru_remove(e);
  alloc().free(en.offset);
  (en.primary ? hdr()->primary_bytes : hdr()->secondary_bytes) -= en.size;
  en.offset = 0;
  en.loc = Location::kNone;
}

void NodeStore::finalize(int32_t e) {
  SegmentHeader* h = hdr();
  ObjectTable t = table();
  Entry& en = t.at(e);
  if (en.loc == Location::kMemory) drop_memory(e);
  if (en.loc == Location::kFallback) {
    ::unlink(fallback_path(spill_dir_, en.id).c_str());
    h->fallback_bytes -= en.size;
    if (en.state == ObjectState::kSealed || en.state == ObjectState::kCreating) {
      --h->fallback_objects;
    }
  }
  if (en.flags & kHasSpillCopy) {
    ::unlink(spill_path(spill_dir_, en.id).c_str());
    h->spilled_bytes -= en.size;
    --h->spilled_objects;
  }
  t.erase(e);
}

}  // namespace weft::store
