// Control messages between ranks: their types and the helpers that encode and decode their
// fields. Every message body starts with the wire version; a decoder that meets a version or a
// length it does not expect throws SerializationError, and the event loop drops that message
// with a logged error instead of crashing.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "weft/detail/object_state.hpp"
#include "weft/errors.hpp"
#include "weft/serialization.hpp"

namespace weft::core {

inline constexpr uint8_t kWireVersion = 5;  // 5: a task's header as one block (submit_wire.hpp)

enum class Msg : uint16_t {
  kSubmitTask = 1,     // owner → executor: run a task
  kTaskResult = 2,     // executor → owner: a task's value or error
  kGetObject = 3,      // borrower → owner: send me this object when it is ready
  kObjectValue = 4,    // owner → borrower: the object's value or error
  kCreateActor = 5,    // creator → host rank
  kActorCall = 6,      // caller → host rank
  kKillActor = 7,      // anyone → host rank
  kNameRegister = 8,   // creator → head
  kNameReply = 9,      // head → requester (register and lookup)
  kNameLookup = 10,    // anyone → head
  kNameRelease = 11,   // host or creator → head, when a named actor dies for good
  kShutdown = 12,      // head → all
  kTaskMoved = 13,     // victim → owner: a queued task of yours now runs at this rank
  kBacklog = 14,       // rank → all: this many stealable tasks wait at my gate (work_stealing.cpp)
  kStealRequest = 15,  // idle rank → victim: send me queued tasks for this many free CPUs
  kStealReply = 16,    // victim → thief: how many tasks it sent (kSubmitTask each, before this)
  // failure detection (heartbeats.cpp)
  kHeartbeat = 17,     // rank → head and head → rank, every failure_timeout_ms / 5
  kRankDead = 18,      // head → every rank: this rank is declared dead (to itself: it is fenced)
  // objects in the node store (object_transfer.cpp)
  kStoredResult = 20,  // executor → owner: the result is a primary in the executor's node store
  kObjectLocation = 21,  // owner → borrower: the value lies in `holder`'s node store
  kPullRequest = 22,   // reader → holder: pin this object and tell me where it is
  kPullReply = 23,     // holder → reader: offset and size in the segment, bytes, or an error
  kPullDone = 24,      // reader → holder: my copy is done; unpin
  kFreeObject = 25,    // owner → holder: the object is dead; remove the primary
  // reference counting (refcount.cpp)
  kBorrowAdd = 50,     // sender → owner: count these refs for the receiver named in the batch
  kBorrowAck = 51,     // owner → sender: counted; the message may go
  kBorrowRelease = 52, // borrower → owner: (id, credits) of states that died
  // placement groups (pg_*.cpp)
  kPgCreate = 30,      // creator → head: a new group
  kPgRemove = 31,      // anyone → head
  kPgSubscribe = 32,   // rank → head: send me this group's state now and on every change
  kPgUpdate = 33,      // head → subscribers: state, reason, bundles, locations
  kPgPrepare = 34,     // head → rank: reserve one bundle (phase one)
  kPgPrepared = 35,    // rank → head: ok + device ids, or why not
  kPgCommit = 36,      // head → rank: the group's prepared bundles are committed (phase two)
  kPgRollback = 37,    // head → rank: undo the group's prepared bundles
  kPgRelease = 38,     // head → rank: the group was removed; free its bundles
  kPgFreed = 39,       // rank → head: resources freed after this rank refused a prepare
  kPgReservations = 40,  // head → every rank: groups CREATED or REMOVED (coalesced updates)
  kActorWhere = 41,    // caller → creator: where is this actor of a PENDING group? (pg_actors.cpp)
  kActorPlaced = 42,   // creator → caller: its rank, or why it will never exist
  kActorCheckpointed = 45,  // host → creator: this actor's first checkpoint is durable
  kStateQuery = 46,    // rank 0 → rank: send me your part of the job's state (state_queries.cpp)
  kStateReply = 47,    // rank → rank 0: the part, as MessagePack
  kNameUpdate = 48,    // creator → head: a named actor restarted on another rank
};

class WireWriter {
 public:
  // Room for a whole control message up front: grown from empty by each small put, a buffer
  // was reallocated about eight times per message (a third of a task's heap allocations).
  static constexpr size_t kInitialBytes = 256;
  explicit WireWriter(serde::Buffer& b) : b_(b) {
    if (b_.capacity() < kInitialBytes) b_.reserve(kInitialBytes);
    put<uint8_t>(kWireVersion);
  }
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    b_.append(&v, sizeof v);
  }
  void put_str(std::string_view s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    b_.append(s.data(), s.size());
  }
  void put_bytes(const void* p, size_t n) { b_.append(p, n); }
  serde::Buffer& buffer() { return b_; }

 private:
  serde::Buffer& b_;
};

class WireReader {
 public:
  WireReader(const char* p, size_t n) : r_(p, n) {
    if (get<uint8_t>() != kWireVersion)
      throw SerializationError("message from a Weft build with another wire version");
  }
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    r_.read(&v, sizeof v);
    return v;
  }
  std::string get_str() {
    uint32_t n = get<uint32_t>();
    const char* p = r_.skip(n);
    return std::string(p, n);
  }
  // The next n bytes, in place (checked against the end like every read).
  std::string_view get_view(size_t n) { return {r_.skip(n), n}; }
  // A count of items that each take at least `min_bytes` after it: refused when the rest of the
  // message cannot hold that many, so a corrupt count never sizes an allocation.
  uint32_t get_count(size_t min_bytes, const char* what) {
    const uint32_t n = get<uint32_t>();
    if (min_bytes != 0 && n > r_.remaining() / min_bytes)
      throw SerializationError(std::string(what) + ": a count of " + std::to_string(n) +
                               " where " + std::to_string(r_.remaining()) + " bytes are left");
    return n;
  }
  size_t remaining() const { return r_.remaining(); }
  // The rest of the message.
  std::pair<const char*, size_t> rest() {
    size_t n = r_.remaining();
    return {r_.skip(n), n};
  }

 private:
  serde::Reader r_;
};

inline void put_error(WireWriter& w, const detail::ErrorInfo& e) {
  w.put<uint8_t>(static_cast<uint8_t>(e.kind));
  w.put<int32_t>(e.rank);
  w.put_str(e.type_name);
  w.put_str(e.message);
  w.put_str(e.function);
}

// A failure's kind must name an error: kNone would read as success where the receiver tests
// `kind != kNone`, and an unknown value as a plain weft::Error.
inline detail::ErrorInfo get_error(WireReader& r) {
  detail::ErrorInfo e;
  const auto kind = r.get<uint8_t>();
  constexpr auto kLast = static_cast<uint8_t>(detail::ErrorKind::kStoreFull);
  if (kind == static_cast<uint8_t>(detail::ErrorKind::kNone) || kind > kLast) {
    throw SerializationError("error reply with error kind " + std::to_string(kind) +
                             " (1 to " + std::to_string(kLast) + " expected)");
  }
  e.kind = static_cast<detail::ErrorKind>(kind);
  e.rank = r.get<int32_t>();
  e.type_name = r.get_str();
  e.message = r.get_str();
  e.function = r.get_str();
  return e;
}

}  // namespace weft::core
