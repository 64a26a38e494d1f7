// Object transfer between nodes, as protocol state without I/O: the pulls this rank makes from
// holders on other nodes, and the views it keeps pinned while remote readers copy from it. The
// event loop feeds it messages and RMA completions and carries out what it returns
// (object_transfer.cpp); unit tests drive two of them over one real node store
// (tests/unit/core/object_puller_test.cpp).
//
// Pull protocol (reader R, holder H on another node):
//   R → H kPullRequest(id)       H pins the object so it cannot move (a spilled one is restored
//                                on a pool thread first, off the loop: Restore)
//   H → R kPullReply(offset)     or the bytes (objects in a fallback file), or an error
//   R: create a secondary, RMA-read into it, seal. The create never waits on the loop (its
//      turns carry the heartbeats): with no room yet the reply is held and tried again every
//      kRoomRetry while spilling makes room, and after alloc_timeout a fallback file is used.
//   R → H kPullDone(id)          H unpins
// Two ranks of R's node pulling the same object race to create the secondary: the store tells
// the loser (kExists / kInProgress) and it waits for the winner's copy, asking H itself if the
// winner gives up (at most kMaxRequests requests in all). Any other failure to make the copy
// (store full, a fallback file that cannot be made) fails the pull's waiters at once, naming the
// object, both nodes and the cause. A reader that fails has its pinned views dropped.
//
// A holder that fails does not take the value with it while the value's owner lives: the owner
// keeps a copy on its own node of every stored value it completes (object_transfer.cpp), so a
// pull from a failed holder asks the owner instead (at once when the holder was known failed
// before the pull began). Only the owner's own pull, the copy it makes of a result, has nowhere
// else to go: it fails, and the owner re-runs the task (task_retry.cpp).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/failed_ranks.hpp"
#include "core/msg_outbox.hpp"
#include "net/topology.hpp"
#include "store/node_store.hpp"
#include "weft/detail/object_state.hpp"

namespace weft::core {

using PulledFn =
    std::function<void(std::shared_ptr<const detail::Payload> payload, detail::ErrorInfo error)>;

// ObjectLostError's ErrorInfo, raised on `rank`.
detail::ErrorInfo lost_error(int rank, const std::string& msg);

class ObjectPuller {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kMaxRequests = 4;
  // How long a pull waits for another rank of this node to finish the same copy.
  static constexpr auto kCopyWait = std::chrono::seconds(60);

  // An RMA read for the loop to start: `size` bytes at `offset` of `holder`'s store region into
  // `copy`; on_read_done when it ends.
  struct Read {
    ObjectId id;
    int holder = -1;
    uint64_t offset = 0;
    uint64_t size = 0;
    std::shared_ptr<store::WritableObject> copy;
  };
  // A kPullReply whose body is `head` followed by the bytes `view` pins (sent in two parts).
  struct BytesReply {
    int dest = -1;
    std::vector<char> head;
    store::ObjectView view;
  };
  // A spilled object a reader asked for: the loop reads it back from its file on a pool thread
  // (restore(), off the loop), then hands the view to restored(), which answers the reader.
  struct Restore {
    int src = -1;
    ObjectId id;
  };
  struct Outbox {
    MsgOutbox msgs;
    std::vector<Read> reads;
    std::vector<BytesReply> bytes;
    std::vector<Restore> restores;
    bool recheck = false;  // a pull waits for another rank's copy: call recheck() next turn
  };

  // `store`: this node's store (null: this rank has none, and every pull fails). `failed`: the
  // ranks this rank knows have failed (null: none ever).
  ObjectPuller(const net::Topology& topo, store::NodeStore* store,
               const FailedRanks* failed = nullptr);

  // --- reader -----------------------------------------------------------------------------------
  // `done` gets a StorePayload of the value on this node (`owner_record`: the owner's record,
  // which frees the copies when it dies), or the error. It may run before pull() returns.
  void pull(const ObjectId& id, int holder, size_t size, bool owner_record, PulledFn done,
            Outbox& out);
  void on_reply(int src, const char* data, size_t len, Outbox& out);
  void on_read_done(const Read& r, bool ok, const std::string& error, Outbox& out);
  // Pulls waiting for another rank of this node to finish the same copy, looked at again.
  void recheck(Clock::time_point now, Outbox& out);
  // Copies waiting for room in this node's store are tried again from the loop's turns, at most
  // every kRoomRetry (a turn that finds none due costs one comparison, and the loop may park
  // meanwhile). retry_room returns how many stopped waiting (made, or failed).
  static constexpr auto kRoomRetry = std::chrono::milliseconds(1);
  bool room_due(Clock::time_point now) const { return room_next_ && now >= *room_next_; }
  size_t retry_room(Outbox& out);
  size_t pulls() const { return pulls_.size(); }

  // --- holder -----------------------------------------------------------------------------------
  void on_request(int src, const char* data, size_t len, Outbox& out);
  void on_done(int src, const char* data, size_t len);
  // The I/O of a Restore: any thread, no puller state touched.
  static void restore(store::NodeStore& store, const Restore& r,
                      std::optional<store::ObjectView>* view, std::string* error);
  // Back on the loop: the reader's reply from the restored view (or the error).
  void restored(const Restore& r, std::optional<store::ObjectView> view, const std::string& error,
                Outbox& out);
  size_t lent() const { return lent_.size(); }

  // `rank` failed: pulls from it ask the object's owner instead, or fail (ObjectLostError naming
  // it) when the owner is this rank or failed too; views it was copying go.
  void peer_failed(int rank, const std::string& reason, Outbox& out);

 private:
  struct Waiter {
    bool owner_record = false;
    PulledFn done;
  };
  // A holder's kPullReply whose copy is not made yet: the store had no room at once
  // (NodeStore::try_create said kNoRoomYet), and retry_room() tries again until the deadline.
  struct HeldReply {
    int src = -1;
    bool segment = true;    // RMA from `offset` of src's segment; else `bytes` came inline
    uint64_t offset = 0;
    uint64_t size = 0;
    std::vector<char> bytes;
    int64_t room_deadline_ns = 0;  // store::monotonic_ns(): then a fallback file, no more waiting
  };
  struct Pull {
    int holder = -1;
    size_t size = 0;
    std::vector<Waiter> waiters;
    // How a failure reaches the waiters: kObjectLost when the holder or the network fails,
    // kStoreFull / kGeneric when this node cannot make the copy.
    detail::ErrorKind error_kind = detail::ErrorKind::kObjectLost;
    int requests = 0;                                // kPullRequests sent
    std::optional<Clock::time_point> copy_deadline;  // set while another rank makes the copy
    std::optional<HeldReply> room;                   // the holder's reply, waiting for room
  };
  // Every waiter of `id` gets the copy now in this node's store, or `error`.
  void finish(const ObjectId& id, const std::string& error,
              std::optional<store::ObjectView> sealed = std::nullopt);
  static std::optional<store::ObjectView> seal_for_waiters(store::WritableObject& copy);
  void request(const ObjectId& id, int holder, Outbox& out);
  // The kPullReply to `src`: where `v` lies in the segment (pinned until kPullDone), its bytes
  // (a fallback file), or the error.
  void answer(int src, const ObjectId& id, std::optional<store::ObjectView> v,
              const std::string& error, Outbox& out);
  void await_copy(const ObjectId& id, Pull& pull, Clock::time_point now, Outbox& out);
  // The copy of `reply`'s bytes in this node's store: an RMA read to start, the bytes copied
  // and sealed, another rank's copy to wait for, or the reply held until there is room.
  void make_copy(const ObjectId& id, Pull& pull, HeldReply reply, Outbox& out);
  bool failed(int rank) const { return failed_ && failed_->contains(rank); }
  // Where to pull `id` from when `holder` has failed: its owner, which keeps a copy on its node;
  // -1 when that is this rank (its own copy is what failed) or the owner failed too.
  int fallback_holder(const ObjectId& id, int holder) const;

  const net::Topology& topo_;
  store::NodeStore* store_;
  const FailedRanks* failed_;
  std::unordered_map<ObjectId, Pull> pulls_;
  std::optional<Clock::time_point> room_next_;  // when held-for-room copies are tried again
  // (reader rank, object) → views pinned until the reader says its copy is done.
  std::multimap<std::pair<int, ObjectId>, store::ObjectView> lent_;
};

}  // namespace weft::core
