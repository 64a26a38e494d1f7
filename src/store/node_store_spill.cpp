// Spilling and restoring. One I/O thread per node (in the process that called create()) writes
// primaries with no active reader to HDF5 spill files whenever primary bytes reach the spill
// threshold or a writer is waiting for room. get() reads a spilled object back into the segment
// (or into a fallback mapping when the segment has no room) and verifies it.
#include <unistd.h>

#include <cstring>

#include "common/check.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "common/timeline.hpp"
#include "store/allocator.hpp"
#include "store/node_store.hpp"
#include "store/object_table.hpp"
#include "store/robust_lock.hpp"
#include "store/segment_layout.hpp"
#include "store/spill_file.hpp"
#include "weft/errors.hpp"

namespace weft::store {
namespace {
constexpr auto kIdlePoll = std::chrono::milliseconds(20);
constexpr int64_t kStallBackoffNs = 100'000'000;

void set_error(SegmentHeader* h, const std::string& msg) {
  h->spill_stalled = 1;
  h->stalled_until_ns = monotonic_ns() + kStallBackoffNs;
  std::strncpy(h->spill_error, msg.c_str(), sizeof(h->spill_error) - 1);
  h->spill_error[sizeof(h->spill_error) - 1] = '\0';
}
}  // namespace

int32_t NodeStore::pick_spill_victim(int64_t now_ns) {
  SegmentHeader* h = hdr();
  const bool over = h->primary_bytes >= h->spill_threshold * double(h->capacity);
  const bool wanted = now_ns < h->room_wanted_until_ns;
  if (!over && !wanted) return -1;
  if (h->spill_stalled && now_ns < h->stalled_until_ns) return -1;
  ObjectTable t = table();
  for (int32_t e = t.lru_tail(true); e >= 0; e = t.at(e).lru_prev) {
    const Entry& en = t.at(e);
    if (en.state == ObjectState::kSealed && en.loc == Location::kMemory && en.pins == 0 &&
        !(en.flags & (kSpilling | kDoomed))) {
      return e;
    }
  }
  return -1;
}

void NodeStore::spill_loop() {
  name_this_thread("spill I/O");
  SegmentLock lk(&hdr()->sync, repair_fn_);
  SegmentHeader* h = hdr();
  ObjectTable t = table();
  while (!stop_) {
    const int32_t e = pick_spill_victim(monotonic_ns());
    if (e < 0) {
      lk.wait_for(kIdlePoll, /*counted=*/false);
      continue;
    }
    Entry& en = t.at(e);
    if (en.flags & kHasSpillCopy) {  // restored earlier and unchanged: its file is still good
      drop_memory(e);
      en.loc = Location::kSpilled;
      lk.notify_waiters();
      continue;
    }
    const ObjectId id = en.id;
    const uint64_t size = en.size;
    const std::string path = spill_path(spill_dir_, id);
    if (h->spill_limit != 0 && h->spilled_bytes + h->fallback_bytes + size > h->spill_limit) {
      set_error(h, "spill_limit " + std::to_string(h->spill_limit) + " bytes reached in " +
                       spill_dir_ + " (" + std::to_string(h->spilled_bytes + h->fallback_bytes) +
                       " bytes on disk; " + id.str() + " needs " + std::to_string(size) + ")");
      lk.notify_waiters();  // writers waiting for room should fall back now
      continue;
    }
    h->spilled_bytes += size;  // reserved before the write so concurrent fallbacks see it
    en.flags |= kSpilling;
    en.busy_pid = ::getpid();
    const std::span<const std::byte> bytes(seg_base() + en.offset, size);
    lk.unlock();
    std::string error;
    try {
      timeline::Span span(timeline::Kind::kSpill, 0, size);
      bool disk_full = false;
      write_spill_file(path, id, bytes, &disk_full);
    } catch (const SpillError& ex) {
      error = ex.what();
    }
    lk.lock();
    Entry& done = t.at(e);  // the entry cannot be reused while kSpilling is set
    done.flags &= ~kSpilling;
    done.busy_pid = 0;
    if (!error.empty()) {
      h->spilled_bytes -= size;
      set_error(h, error);
      WEFT_LOG(Warn) << error;
    } else {
      done.flags |= kHasSpillCopy;
      ++h->spilled_objects;
      ++h->spills;
      h->spill_stalled = 0;
      if (done.pins == 0 && !(done.flags & kDoomed)) {
        drop_memory(e);
        done.loc = Location::kSpilled;
      }
    }
    if ((done.flags & kDoomed) && done.pins == 0) finalize(e);
    lk.notify_waiters();
  }
}

ObjectView NodeStore::restore(SegmentLock& lk, int32_t e) {
  SegmentHeader* h = hdr();
  ObjectTable t = table();
  Entry& en = t.at(e);
  const ObjectId id = en.id;
  const uint64_t size = en.size;
  const uint32_t gen = en.generation;
  const bool primary = en.primary;
  en.flags |= kRestoring;
  en.busy_pid = ::getpid();
  ++en.pins;  // keeps the entry (and its spill file) while we work unlocked

  auto undo = [&](Placement* p) {
    Entry& x = t.at(e);
    if (p != nullptr && !p->fallback) {
      alloc().free(p->offset);
      (primary ? h->primary_bytes : h->secondary_bytes) -= size;
    } else if (p != nullptr) {
      ::unlink(fallback_path(spill_dir_, id).c_str());
      h->fallback_bytes -= size;
    }
    x.offset = 0;
    x.flags &= ~kRestoring;
    x.busy_pid = 0;
    --x.pins;
    if ((x.flags & kDoomed) && x.pins == 0) finalize(e);
    lk.notify_waiters();
  };

  Placement p;
  try {
    p = make_room(lk, id, size, primary);
  } catch (...) {
    undo(nullptr);
    throw;
  }
  t.at(e).offset = p.offset;  // lets repair() tell this block from a leak
  lk.unlock();
  Mapping m;
  std::exception_ptr failure;
  try {
    std::byte* dst = seg_base() + p.offset;
    if (p.fallback) {
      m = file_create_mapped(fallback_path(spill_dir_, id), size);
      dst = static_cast<std::byte*>(m.addr());
    }
    timeline::Span span(timeline::Kind::kRestore, 0, size);
    read_spill_file(spill_path(spill_dir_, id), id, std::span<std::byte>(dst, size));
  } catch (...) {
    failure = std::current_exception();
  }
  lk.lock();
  if (failure) {
    m.reset();
    undo(&p);
    std::rethrow_exception(failure);
  }
  Entry& done = t.at(e);
  done.flags &= ~kRestoring;
  done.busy_pid = 0;
  ++h->restores;
  if (p.fallback) {
    done.loc = Location::kFallback;
    ++h->fallback_objects;
  } else {
    done.loc = Location::kMemory;
    t.lru_push_front(e);
  }
  lk.notify_waiters();
  const std::byte* data =
      p.fallback ? static_cast<const std::byte*>(m.addr()) : seg_base() + p.offset;
  if (p.fallback) {
    // The writable mapping becomes the view's; reopen read-only so the type and the mapping agree.
    m.reset();
    lk.unlock();
    Mapping ro;
    try {
      ro = file_map_readonly(fallback_path(spill_dir_, id), size);
    } catch (...) {
      release_view(e, gen);
      throw;
    }
    data = static_cast<const std::byte*>(ro.addr());
    return ObjectView(this, e, gen, id, data, size, primary, std::move(ro));
  }
  return ObjectView(this, e, gen, id, data, size, primary, Mapping());
}

}  // namespace weft::store
