// Tasks retried by their owner (TaskOptions::max_retries, retry_exceptions). The owner keeps what
// it sent (RetrySpec) while the task is in flight. When the rank running it fails
// (peer_failure.cpp) or, with retry_exceptions, when its body throws, the same item goes to a live
// rank that can run it, until max_retries is used up (-1: without limit); so does a task whose
// stored result is lost with its holder before the owner has its own copy (retry_lost_result: the
// copy's failure may come before the holder is declared failed). The final error says how many
// attempts were made and where each ran. A result that arrives from an attempt the owner gave
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

RetrySpec* EventLoop::keep_for_retry(const PendingCall& call, InFlight& flight, int target) {
  const bool system = call.max_retries != 0 && target != rank_;  // a local rank dies with us
  if (!system && !(call.retry_exceptions && call.max_retries != 0)) return nullptr;
  flight.retry = std::make_unique<RetrySpec>();
  RetrySpec& spec = *flight.retry;
  spec.left = call.max_retries;
  spec.exceptions = call.retry_exceptions;
  spec.rank = target;
  return &spec;
}

bool EventLoop::retry_task(InFlight& f, const ObjectId& id, const detail::ErrorInfo& why,
                           int avoid) {
  RetrySpec& r = *f.retry;
  if (r.left == 0) return false;
  // A live rank that can run it.
  const int target = placer_.overflow_rank(r.item.need, r.item.strategy, failed_, avoid);
  if (target < 0) return false;
  if (r.left > 0) --r.left;
  placer_.moved(f.rank, target, f.need, &f.reserved, /*take_free_slot=*/false);
  f.rank = target;
  r.earlier.push_back(r.rank);
  r.rank = target;
  if (auto it = arg_holds_.find(id); it != arg_holds_.end())
    note_stored_readers(it->second, target);
  const detail::FunctionEntry* fe = detail::find_function(r.item.fn_id);
  // A rank's death retries many tasks at once, and fail_work_on sums them up in one line; an
  // exception's retry is one task's own news.
  const bool own_news = why.kind == detail::ErrorKind::kTask;
  if (own_news ? WEFT_LOG_ENABLED(Warn) : WEFT_LOG_ENABLED(Debug)) {
    const std::string text =
        "retrying task " +
        task_label(fe ? fe->name : "#" + std::to_string(r.item.fn_id), r.item.rare->name) +
        " on rank " + std::to_string(target) + " (attempt " + std::to_string(r.attempts()) + "; " +
        (r.left < 0 ? std::string("no limit") : std::to_string(r.left) + " retries left") +
        "): " + why.message;
    if (own_news)
      WEFT_LOG(Warn) << text;
    else
      WEFT_LOG(Debug) << text;
  }
  if (target == rank_)
    enqueue_exec(std::make_unique<ExecItem>(
        r.item));  // the body consumes its copy; the spec stays for the next
  else
    send_submit(target, r.item, r.item.holds);
  return true;
}

bool EventLoop::retry_lost_result(int holder, const ObjectId& id, detail::ErrorInfo& e) {
  if (e.kind != detail::ErrorKind::kObjectLost) return false;
  auto it = inflight_.find(id);
  // Another attempt runs already (the holder was declared failed first): on_result drops this.
  if (it == inflight_.end() || it->second.rank != holder) return false;
  InFlight& f = it->second;
  if (f.retry && retry_task(f, id, e, /*avoid=*/holder)) {
    WEFT_LOG(Warn) << "the result " << id.str() << " was lost with its holder before this rank "
                   << "had a copy; its task runs again: " << e.message;
    return true;
  }
  e.message += retry_note(f, /*system_failure=*/true);
  return false;
}

// How the final error of a task that may no longer be retried ends.
std::string EventLoop::retry_note(const InFlight& f, bool system_failure) const {
  if (!f.retry) return system_failure ? " (max_retries = 0: not retried)" : "";
  const RetrySpec& r = *f.retry;
  if (r.left != 0) return " (" + r.attempts_text() + "; no live rank left that can run it)";
  return " (" + r.attempts_text() + "; max_retries used up)";
}

}  // namespace weft::core
