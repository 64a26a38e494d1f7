// An actor whose handle left its creator before the actor had a rank: every weft::actor<T>()
// .remote() returns at once, as in Ray, while placement (its arguments, a placement group, a
// hard affinity, the head accepting its name) goes on in the creator's loop (unplaced_actors.cpp).
// On the creator, the entry exists from the creation on and learns the rank or the failure; on
// another rank holding such a handle, it exists from the first call and is filled by the
// creator's kActorPlaced.
#pragma once

#include <memory>
#include <vector>

#include "weft/detail/object_state.hpp"

namespace weft::core {

struct PendingCall;
class EventLoop;

struct UnplacedActor {
  int rank = -1;  // once placed
  bool failed = false;
  detail::ErrorInfo error;  // why it will never exist (when failed)
  bool asked = false;       // not the creator: kActorWhere sent
  bool died = false;        // failed after it lived: `error` is the death, not a placement's
  int dead_rank = -1;       // not the creator: asking where it restarted after this rank failed
  struct Parked {
    std::unique_ptr<PendingCall> call;
    bool skip = false;  // only its place in the caller's order (it failed already)
  };
  std::vector<Parked> calls;                   // in submission order, sent once the rank is known
  // Creator: ranks that asked where it is, each with the rank it knows failed (-1: none); one is
  // answered once the actor lives elsewhere than that rank, or will never live again.
  std::vector<std::pair<int, int>> waiters;
  std::vector<detail::StatePtr> rank_waiters;  // ActorHandle::rank() callers on this rank
  bool kill = false;                           // weft::kill before it was placed
};

// Any thread: registers the creation's actor as unplaced and queues the creation, so the
// caller's handle (rank -1) leaves at once.
void submit_actor_creation(EventLoop& l, std::unique_ptr<PendingCall> call);

}  // namespace weft::core
