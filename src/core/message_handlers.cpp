// The runtime's messages (wire.hpp) routed to their handlers by a table indexed by type, one
// entry per message; a type without an entry, or a body its handler cannot decode, is dropped
// with a logged error naming the sender, never a crash.
#include <array>
#include <type_traits>

#include "common/log.hpp"
#include "core/event_loop.hpp"

namespace weft::core {
namespace {

using Handler = void (*)(EventLoop&, int src, const char* data, size_t len);
constexpr size_t kTypes = 64;  // every Msg value is below this

// Adapts a handler of any of the loop's three shapes, (src, data, len), (data, len) or (),
// to the table's.
template <auto F>
void route(EventLoop& l, int src, const char* data, size_t len) {
  if constexpr (std::is_invocable_v<decltype(F), EventLoop&, int, const char*, size_t>)
    (l.*F)(src, data, len);
  else if constexpr (std::is_invocable_v<decltype(F), EventLoop&, const char*, size_t>)
    (l.*F)(data, len);
  else
    (l.*F)();
}

}  // namespace

void EventLoop::handle_shutdown(const char* data, size_t len) {
  WireReader r(data, len);
  exit_code_ = r.get<int32_t>();
  for (uint32_t n = r.get<uint32_t>(); n > 0; --n) mark_failed(r.get<int32_t>());
  stop_ = true;
}

void EventLoop::on_message(int src, uint16_t type, const char* data, size_t len) {
  static const std::array<Handler, kTypes> table = [] {
    std::array<Handler, kTypes> t{};
    // at(): a message type past kTypes fails loudly at the first message, not silently.
    auto on = [&t](Msg m, Handler h) { t.at(static_cast<size_t>(m)) = h; };
    // tasks and objects (submitter.cpp, executor.cpp, work_stealing.cpp)
    on(Msg::kSubmitTask, route<&EventLoop::handle_submit_task>);
    on(Msg::kTaskResult, route<&EventLoop::handle_task_result>);
    on(Msg::kTaskMoved, route<&EventLoop::handle_task_moved>);
    on(Msg::kBacklog, route<&EventLoop::handle_backlog>);
    on(Msg::kStealRequest, route<&EventLoop::handle_steal_request>);
    on(Msg::kStealReply, route<&EventLoop::handle_steal_reply>);
    // failure detection (heartbeats.cpp)
    on(Msg::kHeartbeat, route<&EventLoop::handle_heartbeat>);
    on(Msg::kRankDead, route<&EventLoop::handle_rank_dead>);
    on(Msg::kGetObject, route<&EventLoop::handle_get_object>);
    on(Msg::kObjectValue, route<&EventLoop::handle_object_value>);
    // actors (actor_host.cpp) and the head's directory
    on(Msg::kCreateActor, route<&EventLoop::handle_create_actor>);
    on(Msg::kActorCall, route<&EventLoop::handle_actor_call>);
    on(Msg::kKillActor, route<&EventLoop::handle_kill_actor>);
    on(Msg::kNameRegister, route<&EventLoop::handle_name_register>);
    on(Msg::kNameLookup, route<&EventLoop::handle_name_lookup>);
    on(Msg::kNameReply, route<&EventLoop::handle_name_reply>);
    on(Msg::kNameRelease, route<&EventLoop::handle_name_release>);
    on(Msg::kNameUpdate, route<&EventLoop::handle_name_update>);
    on(Msg::kShutdown, route<&EventLoop::handle_shutdown>);
    // placement groups (pg_*.cpp)
    on(Msg::kPgCreate, route<&EventLoop::handle_pg_create>);
    on(Msg::kPgRemove, route<&EventLoop::handle_pg_remove>);
    on(Msg::kPgSubscribe, route<&EventLoop::handle_pg_subscribe>);
    on(Msg::kPgUpdate, route<&EventLoop::handle_pg_update>);
    on(Msg::kPgPrepare, route<&EventLoop::handle_pg_prepare>);
    on(Msg::kPgPrepared, route<&EventLoop::handle_pg_prepared>);
    on(Msg::kPgCommit, route<&EventLoop::handle_pg_commit>);
    on(Msg::kPgRollback, route<&EventLoop::handle_pg_rollback>);
    on(Msg::kPgRelease, route<&EventLoop::handle_pg_release>);
    on(Msg::kPgFreed, route<&EventLoop::handle_pg_freed>);
    on(Msg::kPgReservations, route<&EventLoop::handle_pg_reservations>);
    on(Msg::kActorWhere, route<&EventLoop::handle_actor_where>);
    on(Msg::kActorPlaced, route<&EventLoop::handle_actor_placed>);
    on(Msg::kActorCheckpointed, route<&EventLoop::handle_actor_checkpointed>);
    on(Msg::kStateQuery, route<&EventLoop::handle_state_query>);
    on(Msg::kStateReply, route<&EventLoop::handle_state_reply>);
    // the node store's data plane (object_transfer.cpp)
    on(Msg::kStoredResult, route<&EventLoop::handle_stored_result>);
    on(Msg::kObjectLocation, route<&EventLoop::handle_object_location>);
    on(Msg::kPullRequest, route<&EventLoop::handle_pull_request>);
    on(Msg::kPullReply, route<&EventLoop::handle_pull_reply>);
    on(Msg::kPullDone, route<&EventLoop::handle_pull_done>);
    on(Msg::kFreeObject, route<&EventLoop::handle_free_object>);
    // reference counting (refcount.cpp)
    on(Msg::kBorrowAdd, route<&EventLoop::handle_borrow_add>);
    on(Msg::kBorrowAck, route<&EventLoop::handle_borrow_ack>);
    on(Msg::kBorrowRelease, route<&EventLoop::handle_borrow_release>);
    return t;
  }();
  const Handler h = type < kTypes ? table[type] : nullptr;
  if (!h) {
    WEFT_LOG(Error) << "dropped a message of unknown type " << type << " from rank " << src;
    return;
  }
  try {
    h(*this, src, data, len);
  } catch (const std::exception& e) {
    WEFT_LOG(Error) << "dropped a malformed message (type " << type << ", " << len
                    << " bytes) from rank " << src << ": " << e.what();
  }
}

}  // namespace weft::core
