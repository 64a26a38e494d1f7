#include "core/worker_pool.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/thread_name.hpp"

namespace weft::core {
namespace {
thread_local int t_help_depth = 0;
constexpr int kMaxHelpDepth = 256;  // needs the 32 MiB stacks set below

// Waits until `count` is zero, at most `ms` milliseconds; true if it got there.
bool wait_for_zero(const std::atomic<int64_t>& count, int ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (count.load(std::memory_order_acquire) > 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}
}  // namespace

WorkerPool::WorkerPool(int threads) : threads_(std::max(1, threads)) {
  // TBB sizes its worker pool from the machine's cores; a rank may run more blocking-prone
  // threads than that, so raise the global limit to what this rank's arena asks for.
  size_t want = std::max<size_t>(threads_ + 1, tbb::this_task_arena::max_concurrency());
  control_ =
      std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, want);
  // A thread blocked in get() runs other jobs on its own stack (up to kMaxHelpDepth deep).
  stack_ = std::make_unique<tbb::global_control>(tbb::global_control::thread_stack_size, 32u << 20);
  arena_ = std::make_unique<tbb::task_arena>(threads_, 0);
}

WorkerPool::~WorkerPool() {
  drain(2000);
  wait_for_zero(tbb_tasks_, 2000);
  // Jobs that never ran (the job is over) are dropped.
  jobs_.clear();
  apart_.clear();
}

void WorkerPool::submit(Job job) {
  outstanding_.fetch_add(1, std::memory_order_relaxed);
  jobs_.push(std::move(job));
  tbb_tasks_.fetch_add(1, std::memory_order_relaxed);
  arena_->enqueue([this] {
    {
      Job j;
      if (jobs_.try_pop(j)) run_job(j);
    }
    tbb_tasks_.fetch_sub(1, std::memory_order_release);  // the last touch of this pool
  });
}

void WorkerPool::submit_apart(Job job) {
  outstanding_.fetch_add(1, std::memory_order_relaxed);
  apart_.push(std::move(job));
  tbb_tasks_.fetch_add(1, std::memory_order_relaxed);
  arena_->enqueue([this] {
    {
      Job j;
      if (apart_.try_pop(j)) {
        j();
        j = Job();  // its captures go before the count says it ended
        outstanding_.fetch_sub(1, std::memory_order_release);
      }
    }
    tbb_tasks_.fetch_sub(1, std::memory_order_release);  // the last touch of this pool
  });
}

void WorkerPool::run_job(Job& job) {
  // Its timeline track's name; a thread that named itself first (the driver helping while it
  // waits in get) keeps its own.
  thread_local const bool named = (name_this_thread("pool"), true);
  (void)named;
  Job owned = std::move(job);  // what it captured goes when it ends, before the count drops
  owned();
  owned = Job();
  outstanding_.fetch_sub(1, std::memory_order_release);
}

bool WorkerPool::help_one() {
  if (t_help_depth >= kMaxHelpDepth) return false;
  Job j;
  if (!jobs_.try_pop(j)) return false;
  ++t_help_depth;
  run_job(j);
  --t_help_depth;
  return true;
}

bool WorkerPool::drain(int ms) { return wait_for_zero(outstanding_, ms); }

}  // namespace weft::core
