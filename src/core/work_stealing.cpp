// Work stealing between the ranks' gates: the event loop's side of StealPlanner
// (steal_planner.hpp has the protocol and why it is shaped so). A submitter picks a rank from
// what it alone has sent out; with several submitters, or tasks of very uneven length, work can
// still wait at a busy rank while another is idle. Here the busy rank reports its backlog, the
// idle one asks, and the busy one hands queued tasks over as ordinary kSubmitTask messages (their
// refs counted for the thief first, refcount.cpp) and tells each task's owner where it went.
#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/submit_wire.hpp"

namespace weft::core {

bool EventLoop::stealable_by(const ExecItem& item, int thief) const {
  if (!ExecGate::stealable(item)) return false;
  const int thief_node = view_.info(thief).node;
  if (item.local_only && thief_node != view_.info(rank_).node) return false;
  if (item.strategy.hard_affinity() && thief_node != item.strategy.node) return false;
  return item.need.fits_in(view_.info(thief).total);
}

size_t EventLoop::steal_tick(std::chrono::steady_clock::time_point now) {
  size_t sent = 0;
  if (gate_.stealable_queued() > 0 || steal_.reported()) {
    if (auto n = steal_.backlog_report(gate_.stealable_queued(), now)) {
      serde::Buffer b;
      WireWriter w(b);
      w.put<uint32_t>(*n);
      for (int r = 0; r < size_; ++r)
        if (r != rank_ && !known_failed(r)) send(r, Msg::kBacklog, b);
      sent += static_cast<size_t>(size_ - 1);
    }
  }
  if (!steal_.any_backlog()) return sent;
  const int64_t free_units = gate_.free_cpu_units();
  int victim = steal_.victim_to_ask(gate_.idle(), now);
  if (victim < 0) return sent;
  serde::Buffer b;
  WireWriter w(b);
  w.put<int64_t>(free_units);
  send(victim, Msg::kStealRequest, b);
  return sent + 1;
}

void EventLoop::handle_backlog(int src, const char* data, size_t len) {
  WireReader r(data, len);
  steal_.on_backlog(src, r.get<uint32_t>());
}

void EventLoop::handle_steal_request(int src, const char* data, size_t len) {
  WireReader r(data, len);
  int64_t free_units = r.get<int64_t>();
  std::vector<ExecItemPtr> given =
      gate_.give_away(free_units, StealPlanner::grant_limit(gate_.stealable_queued()),
                      [this, src](const ExecItem& item) { return stealable_by(item, src); });
  for (ExecItemPtr& given_item : given) {
    ExecItem& item = *given_item;
    serde::Buffer b;
    WireWriter w(b);
    w.put<ObjectId>(item.ret);
    w.put<int32_t>(src);
    if (item.owner == rank_)
      handle_task_moved(rank_, b.data(), b.size());  // this rank's own submitter, in place
    else if (!known_failed(item.owner))
      send(item.owner, Msg::kTaskMoved, b);
    send_submit(src, item, std::move(item.holds));
  }
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint32_t>(static_cast<uint32_t>(given.size()));
  send(src, Msg::kStealReply, b);
  if (!given.empty())
    WEFT_LOG(Debug) << "gave " << given.size() << " queued task(s) to idle rank " << src;
}

void EventLoop::handle_steal_reply(int src, const char* data, size_t len) {
  WireReader r(data, len);
  steal_.on_reply(src, r.get<uint32_t>());
}

}  // namespace weft::core
