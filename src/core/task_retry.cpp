// Tasks retried by their owner (TaskOptions::max_retries, retry_exceptions). The owner keeps what
// it sent (RetrySpec) while the task is in flight. When the rank running it fails
// (peer_failure.cpp) or, with retry_exceptions, when its body throws, the same item goes to a live
// rank that can run it, until max_retries is used up (-1: without limit); the final error says how
// many attempts were made and where each ran. A result that arrives from an attempt the owner gave
// up on (its rank was declared failed) is dropped, so the value is the one attempt's that the owner
// awaits.
#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/object_store_client.hpp"
#include "weft/detail/registry.hpp"

namespace weft::core {

std::string RetrySpec::attempts_text() const {
  std::string where;
  for (int r : earlier) where += std::to_string(r) + ", ";
  where += std::to_string(rank);
  const size_t n = attempts();
  return std::to_string(n) + (n == 1 ? " attempt, on rank " : " attempts, on ranks ") + where;
}

void EventLoop::keep_for_retry(const PendingCall& call, const ExecItem& item, int target) {
  const bool system = call.max_retries != 0 && target != rank_;  // a local rank dies with us
  if (!system && !(call.retry_exceptions && call.max_retries != 0)) return;
  RetrySpec& spec = inflight_[item.ret].retry.emplace();
  spec.item = item;
  spec.left = call.max_retries;
  spec.exceptions = call.retry_exceptions;
  spec.rank = target;
}

bool EventLoop::retry_task(InFlight& f, const ObjectId& id, const detail::ErrorInfo& why) {
  RetrySpec& r = *f.retry;
  if (r.left == 0) return false;
  const int target = pick_overflow(r.item.need, r.item.strategy);  // a live rank that can run it
  if (target < 0) return false;
  if (r.left > 0) --r.left;
  if (f.reserved) dispatch_view_.release(f.rank, f.need);
  --load_[f.rank];
  f.reserved = false;
  f.rank = target;
  ++load_[target];
  r.earlier.push_back(r.rank);
  r.rank = target;
  if (xfer_)
    if (auto it = xfer_->arg_holds.find(id); it != xfer_->arg_holds.end())
      for (const auto& a : it->second)
        if (auto* sp = dynamic_cast<const StorePayload*>(a->payload.get())) sp->note_reader(target);
  const detail::FunctionEntry* fe = detail::find_function(r.item.fn_id);
  WEFT_LOG(Warn) << "retrying task "
                 << task_label(fe ? fe->name : "#" + std::to_string(r.item.fn_id), r.item.name)
                 << " on rank " << target << " (attempt " << r.attempts() << "; "
                 << (r.left < 0 ? std::string("no limit")
                                : std::to_string(r.left) + " retries left")
                 << "): " << why.message;
  ExecItem item = r.item;
  if (target == rank_)
    enqueue_exec(std::move(item));
  else
    send_submit(target, std::move(item));
  return true;
}

// How the final error of a task that may no longer be retried ends.
std::string EventLoop::retry_note(const InFlight& f, bool system_failure) const {
  if (!f.retry) return system_failure ? " (max_retries = 0: not retried)" : "";
  const RetrySpec& r = *f.retry;
  if (r.left != 0) return " (" + r.attempts_text() + "; no live rank left that can run it)";
  return " (" + r.attempts_text() + "; max_retries used up)";
}

}  // namespace weft::core
