// Distributed reference counting, the borrower protocol on one rank, as state without I/O: the
// event loop feeds it what happened and sends the messages it returns (MsgOutbox); unit tests
// drive two or three of them against each other (tests/unit/core/borrow_protocol_test.cpp).
//
//  * A blob that carries refs (task arguments, a result, a put value) lists them: collected at
//    serialization (detail::RefCollector), written as ids in front of the blob on the wire.
//  * Before such a message leaves for rank D, every ref's owner has counted one credit for D:
//    refs this rank owns are counted here at once; for the others, one kBorrowAdd per
//    (owner, receiver) per loop turn, and the message waits here (never a thread) for the
//    kBorrowAck.
//  * The receiver adds one credit per id to its own state of the object and keeps the states
//    with the carrier (the running task, the actor call, the outer object's state) until the
//    refs are deserialized. When the receiver is the owner itself, it returns the credit at once.
//  * A borrower's state that dies with credits queues (id, credits), from any thread; the loop
//    sends one kBorrowRelease per owner per turn.
//  * The owner's BorrowTable pins a state while its count is above zero; at zero the pin goes,
//    and the state dies (freeing every store copy) once local refs are gone too.
//  * The owner knows whose credits it counts (kBorrowAdd names the receiver), so a borrower rank
//    that fails gives its credits back implicitly (peer_failed).
// Because the owner counts before the message exists, counts never go transiently negative.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/borrow_table.hpp"
#include "core/failed_ranks.hpp"
#include "core/msg_outbox.hpp"
#include "core/object_table.hpp"

namespace weft::core {

class BorrowProtocol {
 public:
  // `objects`: this rank's states (an owner finds what it lends there); `failed`: the ranks known
  // failed, kept by the caller (peer_failed is told after it is updated).
  BorrowProtocol(int rank, ObjectTable& objects, const FailedRanks& failed);

  // --- sender ----------------------------------------------------------------------------------
  // A message to `dest` whose body lists `refs`: into `out` now when every owner involved has
  // counted `dest` already (this rank owns them, or no ref), else held until the acks arrive.
  void send(int dest, Msg type, std::vector<char> body, std::vector<StatePtr> refs, MsgOutbox& out);
  // Once per loop turn: this turn's kBorrowAdd batches, then the releases queued since the last.
  void flush(MsgOutbox& out);
  void on_ack(const char* data, size_t len, MsgOutbox& out);
  size_t held() const { return held_count_; }

  // --- receiver (borrower) ---------------------------------------------------------------------
  // One credit per id on this rank's state of it (created pending when new), or, at the owner,
  // the in-flight credit returned. The states are the carrier's to keep.
  std::vector<StatePtr> accept(const std::vector<ObjectId>& ids);
  // Any thread: a borrowed state died holding `credits`. True for the first one queued since the
  // last flush (the caller wakes the loop).
  bool queue_release(const ObjectId& id, uint32_t credits);

  // --- owner ------------------------------------------------------------------------------------
  void on_add(int src, const char* data, size_t len, MsgOutbox& out);
  void on_release(int src, const char* data, size_t len);
  const BorrowTable& borrows() const { return borrows_; }

  // `rank` failed (already in `failed`): messages held for its ack go now (its objects fate-share
  // with it; receivers learn that when they read them), and the credits it held as a borrower
  // are dropped. Returns those credits.
  uint64_t peer_failed(int rank, MsgOutbox& out);

 private:
  // A message held until every owner involved has counted its receiver.
  struct Held {
    int dest = -1;
    Msg type{};
    std::vector<char> body;
    std::vector<StatePtr> refs;  // the sender's credits, kept until the message has left
    int waiting = 0;             // owners that have not acknowledged yet
  };
  using HeldList = std::vector<std::shared_ptr<Held>>;
  // This turn's kBorrowAdd for one (owner, receiver), and the messages it releases.
  struct Batch {
    std::vector<ObjectId> ids;
    HeldList held;
  };
  struct Awaiting {
    int owner = -1;
    HeldList held;
  };
  static uint64_t batch_key(int owner, int receiver) {
    return (uint64_t(uint32_t(owner)) << 32) | uint32_t(receiver);
  }
  void release(HeldList& held, MsgOutbox& out);

  const int rank_;
  ObjectTable& objects_;
  const FailedRanks& failed_;
  BorrowTable borrows_;
  std::unordered_map<uint64_t, Batch> batches_;      // (owner, receiver) → this turn's adds
  std::unordered_map<uint64_t, Awaiting> awaiting_;  // batch number → held messages
  uint64_t batch_seq_ = 1;
  size_t held_count_ = 0;
  // Borrower side: (id, credits) from states that died on any thread.
  std::mutex release_mu_;
  std::vector<std::pair<ObjectId, uint32_t>> releases_;
  std::atomic<bool> has_releases_{false};  // lets the loop skip the lock on turns with none
};

}  // namespace weft::core
