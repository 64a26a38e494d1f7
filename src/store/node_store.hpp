// The node object store (DESIGN §4): one POSIX shared-memory segment per node, mapped by every
// rank of the node, holding immutable objects. Same-node reads are zero-copy views into the
// segment; primaries spill to HDF5 files under memory pressure; secondaries are LRU-evicted
// first; when nothing frees room in time an object lives in a file-backed mapping instead.
//
// One NodeStore per process: the node's first rank calls create() (it also runs the spill I/O
// thread), the others attach() after a barrier. Views and writable objects must not outlive the
// NodeStore that made them. Ownership, reference counts and transfers live in src/core and
// src/net; this module is the node-local mechanism.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "common/process_alive.hpp"
#include "store/mapping.hpp"
#include "store/store_options.hpp"
#include "weft/detail/ids.hpp"

namespace weft::store {

class NodeStore;
struct SegmentHeader;
class SegmentLock;
class Allocator;
class ObjectTable;

// Read-only view of a sealed object; pins it (no eviction, no spilling) while it lives. Writing
// through it is impossible by type.
class ObjectView {
 public:
  ObjectView(ObjectView&& o) noexcept;
  ObjectView& operator=(ObjectView&& o) noexcept;
  ObjectView(const ObjectView&) = delete;
  ObjectView& operator=(const ObjectView&) = delete;
  ~ObjectView();

  const ObjectId& id() const { return id_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  bool primary() const { return primary_; }
  // False for a fallback object (its bytes lie in a file-backed mapping, not in the segment).
  bool in_segment() const { return !mapping_; }

 private:
  friend class NodeStore;
  friend class WritableObject;  // seal_pinned()
  ObjectView(NodeStore* s, int32_t entry, uint32_t gen, ObjectId id, const std::byte* data,
             size_t size, bool primary, Mapping mapping);
  void release();

  NodeStore* store_ = nullptr;
  int32_t entry_ = -1;
  uint32_t generation_ = 0;
  ObjectId id_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool primary_ = false;
  Mapping mapping_;  // set for fallback objects only
};

// An object being written: fill data(), then seal(). Destroyed unsealed, it is discarded.
class WritableObject {
 public:
  WritableObject(WritableObject&& o) noexcept;
  WritableObject& operator=(WritableObject&& o) noexcept;
  WritableObject(const WritableObject&) = delete;
  WritableObject& operator=(const WritableObject&) = delete;
  ~WritableObject();

  const ObjectId& id() const { return id_; }
  std::span<std::byte> data() const { return {data_, size_}; }
  size_t size() const { return size_; }
  bool in_segment() const { return !mapping_; }
  // Makes the object immutable and visible to get() on every rank of the node.
  void seal();
  // seal(), and a view of the sealed object pinned in the same step, so that nothing (another
  // thread or rank of the node making room evicts unpinned secondaries) can take the copy
  // between its seal and its first read. Empty when the object was removed while being written.
  std::optional<ObjectView> seal_pinned();

 private:
  friend class NodeStore;
  WritableObject(NodeStore* s, int32_t entry, uint32_t gen, ObjectId id, std::byte* data,
                 size_t size, Mapping mapping);
  void abort();

  NodeStore* store_ = nullptr;
  int32_t entry_ = -1;
  uint32_t generation_ = 0;
  ObjectId id_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  Mapping mapping_;
};

// What NodeStore::create() did with an id. An id already on the node is an outcome, not an
// error: two ranks of one node pulling the same object race to create its copy, and the one that
// loses reads the winner's. Real failures (store full, a fallback file that cannot be made) are
// thrown as typed errors instead, so a caller can never mistake one for the other.
enum class CreateStatus : uint8_t {
  kCreated,     // a new object, the caller's to fill and seal
  kExists,      // sealed on this node already: get() it
  kInProgress,  // another writer of this node (this rank or another) is filling it now
  kNoRoomYet,   // try_create only: no room now, and spilling may make some before the deadline
};
const char* to_string(CreateStatus s);

class CreateResult {
 public:
  CreateResult(CreateResult&&) noexcept = default;
  CreateResult& operator=(CreateResult&&) noexcept = default;

  CreateStatus status() const { return status_; }
  bool created() const { return status_ == CreateStatus::kCreated; }
  const ObjectId& id() const { return id_; }
  // The new object (created() only).
  WritableObject& object();
  // The new object, for callers whose ids are fresh by construction (a put, a task's result):
  // there an id already on the node is a broken invariant, thrown as weft::Error naming it.
  WritableObject take() &&;

 private:
  friend class NodeStore;
  CreateResult(CreateStatus s, ObjectId id, std::string store, std::optional<WritableObject> w)
      : status_(s), id_(id), store_(std::move(store)), object_(std::move(w)) {}
  CreateStatus status_;
  ObjectId id_;
  std::string store_;  // the segment's name, for errors
  std::optional<WritableObject> object_;
};

// Where an id stands on this node (NodeStore::presence), without pinning anything.
enum class Presence : uint8_t {
  kAbsent,
  kSealed,     // readable: get() finds it
  kWriting,    // being filled by a live process of the node
  kAbandoned,  // its writer died before sealing it: it will never be readable
  kRemoving,   // its owner freed it; views still open keep the bytes until they close
};
const char* to_string(Presence p);

// One object's place in the node store, for `weft list objects` (NodeStore::info).
struct ObjectPlace {
  const char* where = "absent";  // "memory", "spilled" (only in its spill file), "fallback"
  bool primary = false;
  bool spill_copy = false;  // a valid spill file exists (also while back in memory)
  int32_t pins = 0;         // live views and in-flight restores, of every rank of the node
  uint64_t size = 0;
};

class NodeStore {
 public:
  // First rank of the node: creates the segment (the name must be free) and the spill
  // directory, and starts the spill I/O thread. Throws weft::Error on failure.
  static std::unique_ptr<NodeStore> create(const StoreOptions& opts);
  // Other ranks, after create() returned on the first one. Only opts.name is read: everything
  // else comes from the segment.
  static std::unique_ptr<NodeStore> attach(const StoreOptions& opts);
  ~NodeStore();
  NodeStore(const NodeStore&) = delete;
  NodeStore& operator=(const NodeStore&) = delete;

  // Allocates an object to be written. primary: the producing node's copy (pinned: never
  // evicted, only spilled); secondary: a pulled copy (LRU-evictable when unpinned). Waits up to
  // alloc_timeout for eviction or spilling to make room, then falls back to a file-backed
  // mapping. An id the node already holds, sealed or being written, is returned as kExists or
  // kInProgress (nothing is allocated). Throws ObjectStoreFullError (disk full, spill_limit,
  // table full), weft::Error (a fallback file that cannot be created or mapped; an id whose
  // writer died, or that is being removed, which can never become readable).
  CreateResult create(const ObjectId& id, size_t size, bool primary);
  // create() for a thread that must not wait (an event loop, whose heartbeats would stop): the
  // room there is now (evicting secondaries), else kNoRoomYet while it is before `deadline_ns`
  // (monotonic_ns()) and spilling can still help; the spiller is asked for room until then, and
  // the caller tries again later with the same deadline. From the deadline on, or when spilling
  // cannot help, a fallback file as create() makes after its wait. Errors as create().
  CreateResult try_create(const ObjectId& id, size_t size, bool primary, int64_t deadline_ns);
  // The segment's alloc_timeout, in ns: how long create() waits for room.
  int64_t alloc_timeout_ns() const;
  // Zero-copy view, pinned while it lives; restores a spilled object transparently (throws
  // SpillError if its file is missing or corrupted). nullopt if the node does not hold it.
  std::optional<ObjectView> get(const ObjectId& id);
  bool contains(const ObjectId& id) const;
  Presence presence(const ObjectId& id) const;
  ObjectPlace info(const ObjectId& id) const;
  // Stores a task's result as a primary: create(), copy, seal. A result's id is its task's, so a
  // task run again (its rank died, or the holder of its value did) stores under the same id, and
  // when the earlier attempt ran on this node the node may hold it still. Sealed, that copy is the
  // result (a secondary becomes a primary), as Ray's plasma takes ObjectExists; being written by
  // another process (a killed rank is a zombie for a moment), it is waited for up to
  // alloc_timeout, then a weft::Error; abandoned by a dead writer, it is made anew. Returns the
  // size of the value the node now holds. Errors as create().
  size_t put_result(const ObjectId& id, std::span<const std::byte> value);
  // The same for a value that `fill(dst, ctx)` writes straight into the allocation: exactly
  // `size` bytes (a task's result encoded in place, with no heap buffer in between).
  size_t put_result(const ObjectId& id, size_t size, void (*fill)(char*, const void*),
                    const void* ctx);
  // The owner freed the object: drops its memory, spill file and fallback file. Views still
  // open keep the bytes alive until they close. No-op if absent.
  void remove(const ObjectId& id);
  StoreStats stats() const;

  // For UCX registration by the transport.
  void* base() const;
  size_t segment_size() const;
  // Offset of the view's bytes in the segment; throws weft::Error for a fallback view.
  size_t offset_of(const ObjectView& v) const;

  const std::string& spill_dir() const { return spill_dir_; }
  const std::string& name() const { return name_; }
  // The reason the last spill attempt failed, empty if it succeeded.
  std::string last_spill_error() const;

 private:
  friend class ObjectView;
  friend class WritableObject;
  struct Placement {
    bool fallback = false;
    bool later = false;  // try_create: no room yet, ask again (nothing was taken)
    uint64_t offset = 0;
  };

  NodeStore(Mapping seg, std::string name, bool creator);
  SegmentHeader* hdr() const;
  std::byte* seg_base() const { return static_cast<std::byte*>(seg_.addr()); }
  Allocator alloc() const;
  ObjectTable table() const;
  // A sealed copy of `id` becomes a primary (a secondary leaves the evictable list); its size,
  // or nullopt if the node no longer holds it sealed.
  std::optional<size_t> keep_as_primary(const ObjectId& id);
  void lock_and(const std::function<void(SegmentLock&)>& fn) const;

  // node_store_room.cpp: making room (evict, wait for spilling, fall back).
  // Waits (under `lk`) until `deadline_ns` for eviction or spilling to make room; with
  // `may_wait` false it returns `later` instead of waiting.
  Placement make_room(SegmentLock& lk, const ObjectId& id, uint64_t size, bool primary,
                      int64_t deadline_ns, bool may_wait);
  Placement make_room(SegmentLock& lk, const ObjectId& id, uint64_t size, bool primary);
  CreateResult create_at(const ObjectId& id, size_t size, bool primary, int64_t deadline_ns,
                         bool may_wait);
  bool evict_one_secondary();
  bool spill_can_help() const;
  void reserve_disk(const ObjectId& id, uint64_t size, const std::string& path);
  void finalize(int32_t e);  // frees an entry's memory and files and erases it
  void drop_memory(int32_t e);

  // node_store_spill.cpp: the I/O thread.
  void spill_loop();
  int32_t pick_spill_victim(int64_t now_ns);
  ObjectView restore(SegmentLock& lk, int32_t e);

  // node_store_repair.cpp: after a process died holding the lock.
  void repair(int32_t dead_pid);

  void release_view(int32_t e, uint32_t gen);
  // False when the object was removed while being written (it is gone now). `pin`: the sealed
  // object is pinned once before the lock is let go; `*primary` says whether it is a primary.
  bool seal_object(int32_t e, uint32_t gen, bool pin = false, bool* primary = nullptr);
  void abort_object(int32_t e, uint32_t gen);

  Mapping seg_;
  std::string name_;
  std::string spill_dir_;
  bool creator_;
  std::function<void(int32_t)> repair_fn_;
  std::atomic<bool> stop_{false};
  std::thread spill_thread_;
};

int64_t monotonic_ns();

}  // namespace weft::store
