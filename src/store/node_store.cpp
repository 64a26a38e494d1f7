#include "store/node_store.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <chrono>
#include <ctime>
#include <thread>
#include <utility>

#include "common/check.hpp"
#include "common/log.hpp"
#include "store/allocator.hpp"
#include "store/object_table.hpp"
#include "store/robust_lock.hpp"
#include "store/segment_layout.hpp"
#include "store/spill_file.hpp"
#include "weft/errors.hpp"

namespace weft::store {

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}


namespace {
uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

// ---- construction -----------------------------------------------------------------------------

NodeStore::NodeStore(Mapping seg, std::string name, bool creator)
    : seg_(std::move(seg)), name_(std::move(name)), creator_(creator) {
  repair_fn_ = [this](int32_t dead_pid) { repair(dead_pid); };
  spill_dir_ = hdr()->spill_dir;
}

SegmentHeader* NodeStore::hdr() const { return static_cast<SegmentHeader*>(seg_.addr()); }

Allocator NodeStore::alloc() const { return Allocator(seg_base(), &hdr()->alloc); }

ObjectTable NodeStore::table() const {
  return ObjectTable(&hdr()->table, reinterpret_cast<Entry*>(seg_base() + hdr()->entries_offset),
                     reinterpret_cast<int32_t*>(seg_base() + hdr()->index_offset));
}

void NodeStore::lock_and(const std::function<void(SegmentLock&)>& fn) const {
  SegmentLock lk(&hdr()->sync, repair_fn_);
  fn(lk);
}

std::unique_ptr<NodeStore> NodeStore::create(const StoreOptions& o) {
  if (o.name.empty()) throw Error("object store: StoreOptions.name is empty");
  if (o.capacity < 4096) {
    throw Error("object store: capacity " + std::to_string(o.capacity) +
                " bytes is too small (at least 4096)");
  }
  if (!(o.spill_threshold > 0.0 && o.spill_threshold <= 1.0)) {
    throw Error("object store: spill_threshold must be in (0, 1], got " +
                std::to_string(o.spill_threshold));
  }
  if (o.spill_dir.size() >= sizeof(SegmentHeader::spill_dir)) {
    throw Error("object store: spill_dir path is too long: " + o.spill_dir);
  }
  if (o.max_objects == 0) throw Error("object store: max_objects must be positive");
  make_dirs(o.spill_dir);

  const uint64_t entries_off = round_up(sizeof(SegmentHeader), kPage);
  const uint64_t index_off = round_up(entries_off + uint64_t(o.max_objects) * sizeof(Entry), 64);
  const uint32_t slots = ObjectTable::index_slots_for(o.max_objects);
  const uint64_t region_off = round_up(index_off + uint64_t(slots) * sizeof(int32_t), kPage);
  const uint64_t region_size = round_up(o.capacity, kBlockAlign);
  const uint64_t seg_size = region_off + region_size;

  Mapping seg;
  try {
    seg = shm_create(o.name, seg_size);
  } catch (const Error& e) {
    throw Error(std::string("object store: ") + e.what());
  }
  auto* h = static_cast<SegmentHeader*>(seg.addr());
  std::memset(static_cast<void*>(h), 0, sizeof(SegmentHeader));
  h->version = kLayoutVersion;
  h->creator_pid = ::getpid();
  h->segment_size = seg_size;
  h->entries_offset = entries_off;
  h->index_offset = index_off;
  init_shared_sync(&h->sync);
  auto* base = static_cast<std::byte*>(seg.addr());
  Allocator::init(base, &h->alloc, region_off, region_size);
  ObjectTable::init(&h->table, reinterpret_cast<Entry*>(base + entries_off),
                    reinterpret_cast<int32_t*>(base + index_off), o.max_objects);
  h->capacity = region_size;
  h->spill_threshold = o.spill_threshold;
  h->spill_limit = o.spill_limit;
  h->alloc_timeout_ms = o.alloc_timeout.count();
  std::strncpy(h->spill_dir, o.spill_dir.c_str(), sizeof(h->spill_dir) - 1);
  // Published last: attach() refuses a segment whose magic is not yet set.
  std::atomic_ref<uint64_t>(h->magic).store(kSegmentMagic, std::memory_order_release);

  std::unique_ptr<NodeStore> s(new NodeStore(std::move(seg), o.name, true));
  if (o.spill_thread) {
    s->lock_and([&](SegmentLock&) { s->hdr()->spiller_pid = ::getpid(); });
    s->spill_thread_ = std::thread([p = s.get()] { p->spill_loop(); });
  }
  WEFT_LOG(Debug) << "object store " << o.name << ": " << region_size << " bytes, spill dir "
                  << o.spill_dir;
  return s;
}

std::unique_ptr<NodeStore> NodeStore::attach(const StoreOptions& o) {
  Mapping seg;
  try {
    seg = shm_attach(o.name);
  } catch (const Error& e) {
    throw Error(std::string("object store: ") + e.what() +
                " (was NodeStore::create called on this node first?)");
  }
  auto* h = static_cast<SegmentHeader*>(seg.addr());
  if (seg.size() < sizeof(SegmentHeader) ||
      std::atomic_ref<uint64_t>(h->magic).load(std::memory_order_acquire) != kSegmentMagic ||
      h->version != kLayoutVersion || h->segment_size != seg.size()) {
    throw Error("object store: shared-memory segment /" + o.name +
                " is not an initialised Weft store of this version (attach after a barrier "
                "that follows create)");
  }
  return std::unique_ptr<NodeStore>(new NodeStore(std::move(seg), o.name, false));
}

NodeStore::~NodeStore() {
  if (spill_thread_.joinable()) {
    stop_ = true;
    lock_and([](SegmentLock& lk) { lk.notify_all(); });
    spill_thread_.join();
    lock_and([&](SegmentLock&) {
      if (hdr()->spiller_pid == ::getpid()) hdr()->spiller_pid = 0;
    });
  }
  if (creator_) {
    // The job's store ends with its creator: drop every file it made and the segment's name.
    ObjectTable t = table();
    for (uint32_t e = 0; e < t.capacity(); ++e) {
      const Entry& en = t.at(int32_t(e));
      if (en.state == ObjectState::kFree) continue;
      if (en.flags & kHasSpillCopy) ::unlink(spill_path(spill_dir_, en.id).c_str());
      if (en.loc == Location::kFallback) ::unlink(fallback_path(spill_dir_, en.id).c_str());
    }
    shm_remove(name_);
  }
}

// ---- writing ----------------------------------------------------------------------------------

namespace {

Presence presence_of(const Entry& en) {
  if (en.flags & kDoomed) return Presence::kRemoving;
  if (en.state == ObjectState::kSealed) return Presence::kSealed;
  return process_alive(en.busy_pid) ? Presence::kWriting : Presence::kAbandoned;
}

}  // namespace

const char* to_string(CreateStatus s) {
  switch (s) {
    case CreateStatus::kCreated:
      return "created";
    case CreateStatus::kExists:
      return "already exists";
    case CreateStatus::kInProgress:
      return "being written by another process";
    case CreateStatus::kNoRoomYet:
      return "waiting for room";
  }
  return "?";
}

const char* to_string(Presence p) {
  switch (p) {
    case Presence::kAbsent:
      return "absent";
    case Presence::kSealed:
      return "sealed";
    case Presence::kWriting:
      return "being written";
    case Presence::kAbandoned:
      return "abandoned by a writer that died";
    case Presence::kRemoving:
      return "being removed";
  }
  return "?";
}

WritableObject& CreateResult::object() {
  WEFT_CHECK(object_.has_value()) << "object store: CreateResult::object() of " << id_.str()
                                  << ", which was not created (" << to_string(status_) << ")";
  return *object_;
}

WritableObject CreateResult::take() && {
  if (!object_) {
    throw Error("object store /" + store_ + ": " + id_.str() + " " + to_string(status_) +
                " on this node, but its creator expected a new id (ids are never reused; was "
                "the same result or put stored twice?)");
  }
  return std::move(*object_);
}

CreateResult NodeStore::create(const ObjectId& id, size_t size, bool primary) {
  return create_at(id, size, primary, monotonic_ns() + hdr()->alloc_timeout_ms * 1000000,
                   /*may_wait=*/true);
}

int64_t NodeStore::alloc_timeout_ns() const { return hdr()->alloc_timeout_ms * 1000000; }

CreateResult NodeStore::try_create(const ObjectId& id, size_t size, bool primary,
                                   int64_t deadline_ns) {
  return create_at(id, size, primary, deadline_ns, /*may_wait=*/false);
}

CreateResult NodeStore::create_at(const ObjectId& id, size_t size, bool primary,
                                  int64_t deadline_ns, bool may_wait) {
  SegmentLock lk(&hdr()->sync, repair_fn_);
  ObjectTable t = table();
  if (const int32_t found = t.find(id); found >= 0) {
    const Entry& en = t.at(found);
    switch (presence_of(en)) {
      case Presence::kSealed:
        return CreateResult(CreateStatus::kExists, id, name_, std::nullopt);
      case Presence::kWriting:
        return CreateResult(CreateStatus::kInProgress, id, name_, std::nullopt);
      case Presence::kAbandoned:
        // Its writer died mid-write without holding the lock, so nothing repaired it: nobody
        // can seal or read it, and a retried task or a new pull must be able to make it again.
        WEFT_LOG(Info) << "object store /" << name_ << ": " << id.str()
                       << " was left half-written by process " << en.busy_pid
                       << " of this node, which died; its space is reclaimed and it is made again";
        finalize(found);
        lk.notify_waiters();
        break;
      case Presence::kRemoving:
      case Presence::kAbsent:
        throw Error("object store /" + name_ + ": " + id.str() +
                    " is being removed from this node (its owner freed it) while views of it "
                    "are still open; it cannot be created again until they close");
    }
  }
  const int32_t e = t.insert(id);
  if (e < 0) {
    throw ObjectStoreFullError("object store: object table full (" + std::to_string(t.capacity()) +
                               " objects) creating " + id.str() +
                               "; raise StoreOptions.max_objects");
  }
  Entry& en = t.at(e);
  en.size = size;
  en.primary = primary;
  en.busy_pid = ::getpid();
  const uint32_t gen = en.generation;
  Placement p;
  try {
    p = make_room(lk, id, size, primary, deadline_ns, may_wait);
  } catch (...) {
    t.erase(e);
    lk.notify_waiters();
    throw;
  }
  if (p.later) {  // try_create: nothing was taken; the entry goes until the caller asks again
    t.erase(e);
    lk.notify_waiters();
    return CreateResult(CreateStatus::kNoRoomYet, id, name_, std::nullopt);
  }
  if (!p.fallback) {
    en.loc = Location::kMemory;
    en.offset = p.offset;
    return CreateResult(CreateStatus::kCreated, id, name_,
                        WritableObject(this, e, gen, id, seg_base() + p.offset, size, Mapping()));
  }
  en.loc = Location::kFallback;
  lk.unlock();
  const std::string path = fallback_path(spill_dir_, id);
  Mapping m;
  try {
    m = file_create_mapped(path, size);
  } catch (...) {
    lk.lock();
    hdr()->fallback_bytes -= size;
    t.erase(e);
    throw;
  }
  lk.lock();
  ++hdr()->fallback_objects;
  WEFT_LOG(Debug) << "object store: " << id.str() << " (" << size << " bytes) in fallback file "
                  << path;
  auto* data = static_cast<std::byte*>(m.addr());
  return CreateResult(CreateStatus::kCreated, id, name_,
                      WritableObject(this, e, gen, id, data, size, std::move(m)));
}

bool NodeStore::seal_object(int32_t e, uint32_t gen, bool pin, bool* primary) {
  SegmentLock lk(&hdr()->sync, repair_fn_);
  ObjectTable t = table();
  Entry& en = t.at(e);
  WEFT_CHECK(en.generation == gen && en.state == ObjectState::kCreating);
  if (en.flags & kDoomed) {  // removed while being written
    finalize(e);
    lk.notify_waiters();
    return false;
  }
  en.state = ObjectState::kSealed;
  en.busy_pid = 0;
  if (pin) ++en.pins;
  if (primary) *primary = en.primary;
  if (en.loc == Location::kMemory) t.lru_push_front(e);
  // Nobody waits for a seal; the spiller finds the new primary at its next poll.
  return true;
}

void NodeStore::abort_object(int32_t e, uint32_t gen) {
  SegmentLock lk(&hdr()->sync, repair_fn_);
  Entry& en = table().at(e);
  if (en.generation != gen || en.state != ObjectState::kCreating) return;
  finalize(e);
  lk.notify_waiters();
}

// ---- reading ----------------------------------------------------------------------------------

std::optional<ObjectView> NodeStore::get(const ObjectId& id) {
  SegmentLock lk(&hdr()->sync, repair_fn_);
  ObjectTable t = table();
  for (;;) {
    const int32_t e = t.find(id);
    if (e < 0) return std::nullopt;
    Entry& en = t.at(e);
    if (en.state != ObjectState::kSealed || (en.flags & kDoomed)) return std::nullopt;
    switch (en.loc) {
      case Location::kMemory:
        ++en.pins;
        t.lru_touch(e);
        return ObjectView(this, e, en.generation, id, seg_base() + en.offset, en.size, en.primary,
                          Mapping());
      case Location::kFallback: {
        ++en.pins;
        const uint32_t gen = en.generation;
        const bool primary = en.primary;
        const size_t size = en.size;
        lk.unlock();
        try {
          Mapping m = file_map_readonly(fallback_path(spill_dir_, id), size);
          const auto* data = static_cast<const std::byte*>(m.addr());
          return ObjectView(this, e, gen, id, data, size, primary, std::move(m));
        } catch (...) {
          release_view(e, gen);
          throw;
        }
      }
      case Location::kSpilled:
        if (en.flags & kRestoring) {
          if (process_alive(en.busy_pid)) {  // another rank is reading it back: wait for it
            lk.wait_for(std::chrono::milliseconds(5));
            continue;
          }
          en.flags &= ~kRestoring;  // the restorer died; take over
          --en.pins;
        }
        return restore(lk, e);
      case Location::kNone:
        return std::nullopt;
    }
  }
}

Presence NodeStore::presence(const ObjectId& id) const {
  Presence p = Presence::kAbsent;
  lock_and([&](SegmentLock&) {
    ObjectTable t = table();
    if (const int32_t e = t.find(id); e >= 0) p = presence_of(t.at(e));
  });
  return p;
}

ObjectPlace NodeStore::info(const ObjectId& id) const {
  ObjectPlace p;
  lock_and([&](SegmentLock&) {
    ObjectTable t = table();
    const int32_t e = t.find(id);
    if (e < 0) return;
    const Entry& en = t.at(e);
    p.where = en.loc == Location::kMemory    ? "memory"
              : en.loc == Location::kSpilled  ? "spilled"
              : en.loc == Location::kFallback ? "fallback"
                                              : "absent";
    p.primary = en.primary != 0;
    p.spill_copy = (en.flags & kHasSpillCopy) != 0;
    p.pins = en.pins;
    p.size = en.size;
  });
  return p;
}

bool NodeStore::contains(const ObjectId& id) const {
  bool found = false;
  lock_and([&](SegmentLock&) {
    ObjectTable t = table();
    const int32_t e = t.find(id);
    found = e >= 0 && t.at(e).state == ObjectState::kSealed && !(t.at(e).flags & kDoomed);
  });
  return found;
}

void NodeStore::release_view(int32_t e, uint32_t gen) {
  SegmentLock lk(&hdr()->sync, repair_fn_);
  Entry& en = table().at(e);
  if (en.generation != gen || en.state == ObjectState::kFree) return;
  WEFT_CHECK(en.pins > 0) << "object store: unbalanced release of " << en.id.str();
  if (--en.pins == 0) {
    if ((en.flags & kDoomed) && !(en.flags & (kSpilling | kRestoring))) finalize(e);
    lk.notify_waiters();  // a writer may be waiting for this object to become evictable/spillable
  }
}

size_t NodeStore::put_result(const ObjectId& id, std::span<const std::byte> value) {
  return put_result(
      id, value.size(),
      [](char* dst, const void* v) {
        const auto& bytes = *static_cast<const std::span<const std::byte>*>(v);
        if (!bytes.empty()) std::memcpy(dst, bytes.data(), bytes.size());
      },
      &value);
}

size_t NodeStore::put_result(const ObjectId& id, size_t size, void (*fill)(char*, const void*),
                             const void* ctx) {
  const int64_t deadline = monotonic_ns() + alloc_timeout_ns();
  for (;;) {
    CreateResult r = create(id, size, /*primary=*/true);
    switch (r.status()) {
      case CreateStatus::kCreated: {
        WritableObject& w = r.object();
        fill(reinterpret_cast<char*>(w.data().data()), ctx);
        w.seal();
        return size;
      }
      case CreateStatus::kExists:
        if (std::optional<size_t> kept = keep_as_primary(id)) {
          WEFT_LOG(Info) << "object store /" << name_ << ": " << id.str()
                         << " was stored on this node by an earlier attempt of its task; that copy ("
                         << *kept << " bytes) is kept";
          return *kept;
        }
        continue;  // removed since: make it anew
      case CreateStatus::kInProgress:
        if (monotonic_ns() >= deadline) {
          throw Error("object store /" + name_ + ": " + id.str() +
                      " has been written by another process of this node for " +
                      std::to_string(alloc_timeout_ns() / 1000000) +
                      " ms (alloc_timeout), which is still alive; was the same task run twice "
                      "at once on this node?");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      case CreateStatus::kNoRoomYet:
        break;  // only try_create() answers this
    }
    WEFT_CHECK(false) << "object store: create() of " << id.str() << " answered "
                      << to_string(r.status());
  }
}

std::optional<size_t> NodeStore::keep_as_primary(const ObjectId& id) {
  SegmentLock lk(&hdr()->sync, repair_fn_);
  ObjectTable t = table();
  const int32_t e = t.find(id);
  if (e < 0) return std::nullopt;
  Entry& en = t.at(e);
  if (en.state != ObjectState::kSealed || (en.flags & kDoomed)) return std::nullopt;
  if (!en.primary) {
    const bool listed = (en.flags & kInLru) != 0;
    t.lru_remove(e);  // from the secondaries' list
    if (en.loc == Location::kMemory) {
      hdr()->secondary_bytes -= en.size;
      hdr()->primary_bytes += en.size;
    }
    en.primary = 1;
    if (listed) t.lru_push_front(e);  // into the primaries' list, which the spiller walks
  }
  return static_cast<size_t>(en.size);
}

void NodeStore::remove(const ObjectId& id) {
  SegmentLock lk(&hdr()->sync, repair_fn_);
  ObjectTable t = table();
  const int32_t e = t.find(id);
  if (e < 0) return;
  Entry& en = t.at(e);
  if (en.pins > 0 || (en.flags & (kSpilling | kRestoring)) || en.state == ObjectState::kCreating) {
    en.flags |= kDoomed;  // whoever holds it last frees it
    return;
  }
  finalize(e);
  hdr()->spill_stalled = 0;  // disk or memory was freed: a stalled spiller may try again
  lk.notify_waiters();
}

// ---- introspection ----------------------------------------------------------------------------

StoreStats NodeStore::stats() const {
  StoreStats s;
  lock_and([&](SegmentLock&) {
    const SegmentHeader* h = hdr();
    s.capacity = h->capacity;
    s.used = h->alloc.used;
    s.primary_bytes = h->primary_bytes;
    s.secondary_bytes = h->secondary_bytes;
    s.spilled_bytes = h->spilled_bytes;
    s.spilled_objects = h->spilled_objects;
    s.fallback_bytes = h->fallback_bytes;
    s.fallback_objects = h->fallback_objects;
    s.num_objects = h->table.count;
    s.evictions = h->evictions;
    s.spills = h->spills;
    s.restores = h->restores;
    s.lock_recoveries = h->lock_recoveries;
  });
  return s;
}

std::string NodeStore::last_spill_error() const {
  std::string s;
  lock_and([&](SegmentLock&) { s = hdr()->spill_stalled ? hdr()->spill_error : ""; });
  return s;
}

void* NodeStore::base() const { return seg_.addr(); }
size_t NodeStore::segment_size() const { return seg_.size(); }

size_t NodeStore::offset_of(const ObjectView& v) const {
  if (!v.in_segment()) {
    throw Error("object store: " + v.id().str() +
                " lives in a fallback file mapping, not in the segment");
  }
  return static_cast<size_t>(v.data() - seg_base());
}

// ---- handles ----------------------------------------------------------------------------------

ObjectView::ObjectView(NodeStore* s, int32_t entry, uint32_t gen, ObjectId id,
                       const std::byte* data, size_t size, bool primary, Mapping mapping)
    : store_(s),
      entry_(entry),
      generation_(gen),
      id_(id),
      data_(data),
      size_(size),
      primary_(primary),
      mapping_(std::move(mapping)) {}

ObjectView::ObjectView(ObjectView&& o) noexcept
    : store_(std::exchange(o.store_, nullptr)),
      entry_(o.entry_),
      generation_(o.generation_),
      id_(o.id_),
      data_(o.data_),
      size_(o.size_),
      primary_(o.primary_),
      mapping_(std::move(o.mapping_)) {}

ObjectView& ObjectView::operator=(ObjectView&& o) noexcept {
  if (this != &o) {
    release();
    store_ = std::exchange(o.store_, nullptr);
    entry_ = o.entry_;
    generation_ = o.generation_;
    id_ = o.id_;
    data_ = o.data_;
    size_ = o.size_;
    primary_ = o.primary_;
    mapping_ = std::move(o.mapping_);
  }
  return *this;
}

ObjectView::~ObjectView() { release(); }

void ObjectView::release() {
  if (store_ == nullptr) return;
  mapping_.reset();
  std::exchange(store_, nullptr)->release_view(entry_, generation_);
}

WritableObject::WritableObject(NodeStore* s, int32_t entry, uint32_t gen, ObjectId id,
                               std::byte* data, size_t size, Mapping mapping)
    : store_(s),
      entry_(entry),
      generation_(gen),
      id_(id),
      data_(data),
      size_(size),
      mapping_(std::move(mapping)) {}

WritableObject::WritableObject(WritableObject&& o) noexcept
    : store_(std::exchange(o.store_, nullptr)),
      entry_(o.entry_),
      generation_(o.generation_),
      id_(o.id_),
      data_(o.data_),
      size_(o.size_),
      mapping_(std::move(o.mapping_)) {}

WritableObject& WritableObject::operator=(WritableObject&& o) noexcept {
  if (this != &o) {
    abort();
    store_ = std::exchange(o.store_, nullptr);
    entry_ = o.entry_;
    generation_ = o.generation_;
    id_ = o.id_;
    data_ = o.data_;
    size_ = o.size_;
    mapping_ = std::move(o.mapping_);
  }
  return *this;
}

WritableObject::~WritableObject() { abort(); }

void WritableObject::seal() {
  WEFT_CHECK(store_ != nullptr) << "seal() of an object already sealed or moved from";
  mapping_.reset();  // the bytes are in the file; readers map it themselves
  std::exchange(store_, nullptr)->seal_object(entry_, generation_);
}

std::optional<ObjectView> WritableObject::seal_pinned() {
  WEFT_CHECK(store_ != nullptr) << "seal_pinned() of an object already sealed or moved from";
  const bool fallback = static_cast<bool>(mapping_);
  mapping_.reset();  // a fallback's bytes are in its file: the view maps it read-only
  NodeStore* s = std::exchange(store_, nullptr);
  bool primary = false;
  if (!s->seal_object(entry_, generation_, /*pin=*/true, &primary)) return std::nullopt;
  if (!fallback) return ObjectView(s, entry_, generation_, id_, data_, size_, primary, Mapping());
  try {
    Mapping m = file_map_readonly(fallback_path(s->spill_dir_, id_), size_);
    const auto* data = static_cast<const std::byte*>(m.addr());
    return ObjectView(s, entry_, generation_, id_, data, size_, primary, std::move(m));
  } catch (...) {
    s->release_view(entry_, generation_);
    throw;
  }
}

void WritableObject::abort() {
  if (store_ == nullptr) return;
  mapping_.reset();
  std::exchange(store_, nullptr)->abort_object(entry_, generation_);
}

}  // namespace weft::store
