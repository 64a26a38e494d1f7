// When a peer is declared dead (EventLoop::on_peer_failed, reported by the transport), the work
// that waits on it fails now with a typed error instead of waiting forever — Ray's silent hang
// is what this file exists to prevent (DESIGN §6):
//  * tasks this rank submitted that were running there: sent again to a live rank while their
//    max_retries allows (task_retry.cpp), else ObjectLostError saying how many attempts ran;
//  * actors this rank created there: restarted elsewhere while max_restarts allows; calls in
//    flight there re-sent to the restart while max_task_retries allows, else ActorDiedError;
//    later calls wait for the restart, or fail with ActorDiedError (actor_restarts.cpp);
//  * borrowed objects that rank owned and this rank is still waiting for, or asks for later:
//    OwnerDiedError (objects fate-share with their owner).
// What that rank borrowed from this one is released by mark_failed (refcount.cpp, BorrowProtocol::peer_failed).
#include "common/log.hpp"
#include "core/event_loop.hpp"

namespace weft::core {
namespace {

// "rank 2, which failed (UCX endpoint error: ...)"
std::string rank_failed(int rank, const std::string& reason) {
  return "rank " + std::to_string(rank) + ", which failed (" + reason + ")";
}

}  // namespace

void EventLoop::fail_work_on(int rank, const std::string& reason) {
  std::vector<ObjectId> tasks, calls;
  for (const auto& [id, f] : inflight_)
    if (f.rank == rank) tasks.push_back(id);
  for (const auto& [id, r] : calls_inflight_)
    if (r == rank) calls.push_back(id);
  size_t retried = 0;
  for (const auto& id : tasks) {
    InFlight& f = inflight_.at(id);
    detail::ErrorInfo e{.kind = detail::ErrorKind::kObjectLost,
                        .rank = rank,
                        .message = "the task producing " + id.str() + " was running on " +
                                   rank_failed(rank, reason)};
    if (f.retry && retry_task(f, id, e)) {  // task_retry.cpp: on a live rank again
      ++retried;
      continue;
    }
    e.message += retry_note(f, /*system_failure=*/true);
    on_result(rank, id, false, nullptr, 0, std::move(e));
  }
  // Actors this rank created there restart first (max_restarts), so that calls in flight there
  // are re-sent to the new incarnation (max_task_retries) or fail (actor_restarts.cpp).
  restart_actors_on(rank, reason);
  resend_calls_on(rank, reason, calls);
  // Borrowed objects that rank owned: nobody else can ever produce them.
  std::vector<StatePtr> orphans =
      objects_.collect([rank](const ObjectState& s) { return s.id.owner == rank && !s.done(); });
  for (const auto& s : orphans) fail_owner_died(s);
  if (!tasks.empty() || !calls.empty() || !orphans.empty())
    WEFT_LOG(Warn) << "rank " << rank << " is gone: retried " << retried << " task(s), failed "
                   << tasks.size() - retried << " task(s), " << calls.size()
                   << " actor call(s) in flight (re-sent to restarts or failed) and "
                   << orphans.size() << " borrowed object(s) waiting on it";
}

void EventLoop::fail_owner_died(const StatePtr& s) {
  complete_error(*s,
                 detail::ErrorInfo{.kind = detail::ErrorKind::kOwnerDied,
                                   .rank = s->id.owner,
                                   .message = s->id.str() + " is lost with its owner: rank " +
                                              std::to_string(s->id.owner) +
                                              " failed before the value reached rank " +
                                              std::to_string(rank_)},
                 completions_);
  on_object_done(s);
}

void EventLoop::fail_dead_actor_call(PendingCall& call) {
  complete_error(*call.result,
                 detail::ErrorInfo{.kind = detail::ErrorKind::kActorDied,
                                   .rank = call.actor.rank,
                                   .message = "the actor " + call.actor.id.str() +
                                              " lived on rank " + std::to_string(call.actor.rank) +
                                              ", which has failed; create a new actor"},
                 completions_);
  on_object_done(call.result);
}

}  // namespace weft::core
