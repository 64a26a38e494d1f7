#include "net/ucx_bulk_thread.hpp"

#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "net/net_error.hpp"

namespace weft::net::detail {
namespace {

// After this long without work the thread parks (spinning longer buys a pipelined read little).
constexpr auto kSpinFor = std::chrono::microseconds(200);
// Parked with reads in flight, or soon after work: a read's completion or a peer's request is
// usually close (and the event fd may not announce every transport's progress).
constexpr int kBusyParkMs = 1;
// Parked when idle: the event fd (a peer's read, a connection) and the eventfd (a read of ours,
// a failure, stop) wake it earlier; the bound only guards against an event the fd misses.
constexpr int kIdleParkMs = 500;
// Without an event fd (ucx_wakeup=false) nothing wakes it: it sleeps in slices.
constexpr auto kSliceBusy = std::chrono::microseconds(100);
constexpr auto kSliceIdle = std::chrono::milliseconds(1);
constexpr auto kRecentWork = std::chrono::milliseconds(20);

}  // namespace

UcxBulkThread::UcxBulkThread(MPI_Comm world, const Topology& topo, size_t chunk_bytes, size_t depth,
                             bool wakeup, std::function<void()> notify)
    : eps_(world, topo, "bulk", /*log_failures=*/false),
      rank_(topo.rank),
      rma_(eps_, topo, chunk_bytes, depth),
      notify_(std::move(notify)) {
  if (wakeup) {
    events_.emplace(eps_.worker(), /*edge_triggered=*/false, "bulk reads'");
    if (!events_->valid()) events_.reset();  // it sleeps in slices instead
  }
  start();
}

UcxBulkThread::~UcxBulkThread() {
  stop();
  eps_.close_all();  // while rma_, whose requests' callbacks these completions reach, exists
}

void UcxBulkThread::start() {
  stop_.store(false, std::memory_order_release);
  thread_ = std::thread([this] {
    name_this_thread("ucx bulk");
    log::set_rank(rank_);
    run();
  });
}

void UcxBulkThread::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  signal();
  thread_.join();
}

void UcxBulkThread::signal() {
  if (events_) events_->signal();  // else the thread sleeps in short slices
}

int UcxBulkThread::register_region(MPI_Comm world, void* base, size_t len) {
  stop();
  struct Restart {
    UcxBulkThread* self;
    ~Restart() { self->start(); }
  } restart{this};
  return rma_.register_region(world, base, len);
}

void UcxBulkThread::get(int rank, int region, size_t remote_offset, void* local, size_t len,
                        Done done) {
  rma_.check(rank, region, remote_offset, len);
  unfinished_.fetch_add(1, std::memory_order_acq_rel);
  {
    std::lock_guard<std::mutex> g(mu_);
    reads_.push_back({rank, region, remote_offset, local, len, std::move(done)});
  }
  signal();
}

void UcxBulkThread::fail_rank(int rank, const std::string& reason) {
  {
    std::lock_guard<std::mutex> g(mu_);
    failures_.emplace_back(rank, reason);
  }
  signal();
}

size_t UcxBulkThread::take_finished() {
  std::vector<Finished> fin;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (finished_.empty()) return 0;
    fin.swap(finished_);
  }
  for (Finished& f : fin) {
    unfinished_.fetch_sub(1, std::memory_order_acq_rel);
    f.done(f.ok, f.error);
  }
  return fin.size();
}

size_t UcxBulkThread::take_inbox() {
  std::vector<Read> reads;
  std::vector<std::pair<int, std::string>> failures;
  {
    std::lock_guard<std::mutex> g(mu_);
    reads.swap(reads_);
    failures.swap(failures_);
  }
  for (auto& [rank, reason] : failures) eps_.mark_failed(rank, reason, /*log=*/false);
  for (Read& r : reads) {
    // Runs on this thread: hand the result to the loop, which runs the caller's callback.
    auto back = [this, done = std::move(r.done)](bool ok, const std::string& error) mutable {
      {
        std::lock_guard<std::mutex> g(mu_);
        finished_.push_back({std::move(done), ok, error});
      }
      notify_();
    };
    try {
      rma_.get(r.rank, r.region, r.offset, r.local, r.len, back);  // a copy: `back` may answer
    } catch (const TransportError& e) {  // checked in get(); kept so a read is never lost
      back(false, e.what());
    }
  }
  return reads.size() + failures.size();
}

void UcxBulkThread::run() {
  auto last_work = std::chrono::steady_clock::now();
  while (!stop_.load(std::memory_order_acquire)) {
    size_t n = take_inbox();
    n += eps_.progress();
    n += rma_.advance();
    // An endpoint error fails that endpoint's reads (UcxRma::advance); whether the rank failed
    // is the control path's call, so these records go no further.
    if (eps_.has_new_failures()) eps_.take_new_failures();
    const auto now = std::chrono::steady_clock::now();
    if (n > 0) {
      last_work = now;
      continue;
    }
    wait_for_work(now - last_work);
  }
}

void UcxBulkThread::wait_for_work(std::chrono::steady_clock::duration idle) {
  if (idle < kSpinFor) {
    std::this_thread::yield();
    return;
  }
  const bool soon = rma_.busy() || idle < kRecentWork;
  if (!events_) {
    if (soon)
      std::this_thread::sleep_for(kSliceBusy);
    else
      std::this_thread::sleep_for(kSliceIdle);
    return;
  }
  if (ucp_worker_arm(eps_.worker()) != UCS_OK) return;  // events already: progress again
  events_->wait(soon ? kBusyParkMs : kIdleParkMs);
}

}  // namespace weft::net::detail
