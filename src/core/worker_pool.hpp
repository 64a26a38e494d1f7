// Where task bodies and actor methods run: a oneTBB arena fed from one job queue. A thread that
// blocks in get() keeps the pool moving by running queued jobs itself (helping), so nested tasks
// such as a recursive fibonacci cannot starve the pool of threads.
#pragma once

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <memory>

#include "common/function_queue.hpp"
#include "common/move_only_function.hpp"

namespace weft::core {

// A task body and what follows it: it owns its ExecItem, which std::function (copyable
// callables only) could not hold; one allocation, where std::function took two here.
using Job = MoveOnlyFunction<void()>;

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();

  int threads() const { return threads_; }
  // Queues `job` for a pool thread.
  void submit(Job job);
  // Runs `job` on a pool thread, never on a thread that helps (help_one) while it blocks:
  // for work that must not run inside someone else's wait.
  void submit_apart(Job job);
  // Runs one queued job on the calling thread; false when the queue is empty or this thread is
  // already helping too deeply (bounded stack).
  bool help_one();
  // Fewer jobs queued or running than threads: a job submitted now starts at once.
  bool has_idle_thread() const { return outstanding_.load(std::memory_order_relaxed) < threads_; }
  // Waits until no job is queued or running, at most `ms` milliseconds; true if drained.
  bool drain(int ms);

 private:
  void run_job(Job& job);

  int threads_;
  std::unique_ptr<tbb::global_control> control_, stack_;
  std::unique_ptr<tbb::task_arena> arena_;
  // Every job crosses to its thread through one of these queues, never inside the functor TBB
  // runs: the queues' atomics are compiled into Weft (header templates), so ThreadSanitizer sees
  // the hand-over, which inside Debian's uninstrumented libtbb it cannot.
  FunctionQueue<void()> jobs_;
  FunctionQueue<void()> apart_;  // submit_apart's
  std::atomic<int64_t> outstanding_{0};
  // TBB tasks enqueued and not yet returned. A job can be taken by a helper (help_one) before
  // its TBB task runs; that task still pops this pool's queue afterwards, so the destructor
  // waits for it, not only for the jobs (ThreadSanitizer saw the queue freed under that pop).
  std::atomic<int64_t> tbb_tasks_{0};
};

}  // namespace weft::core
