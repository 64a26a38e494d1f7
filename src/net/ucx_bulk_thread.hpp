// Bulk reads between nodes (pipelined ucp_get_nbx of other ranks' store segments) on their own
// UCX context, worker and thread, apart from the control worker that the event loop progresses.
//
// Why apart: in peer-error mode UCX uses no shared-memory transport (NOTES.md), and over TCP a
// GET is served by the holder's CPU inside ucp_worker_progress. One progress call there served
// hundreds of MiB while the reader kept its pipeline full: 0.3-1 s of one loop turn for a 1 GiB
// read. On the control worker that held the holder's loop, so its heartbeats stopped; across two
// hosts the reader declared the head dead after failure_timeout_ms (500 ms) and the job ended.
// Here the control worker carries only messages, and this thread progresses the bulk worker:
// it serves other nodes' reads of this rank's regions and makes this rank's own. Finished reads
// go back to the event loop, whose poll() runs their callbacks (take_finished), woken by
// `notify`. The thread parks on the bulk worker's event fd when it has nothing to do.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/topology.hpp"
#include "net/ucx_endpoints.hpp"
#include "net/ucx_event_wait.hpp"
#include "net/ucx_rma.hpp"

namespace weft::net::detail {

class UcxBulkThread {
 public:
  using Done = UcxRma::Done;

  // Collective over `world`: its own context, worker and endpoints (addresses exchanged over
  // MPI). `notify` is called from the bulk thread when a read finished (the loop's wake).
  // `wakeup`: park on the worker's event fd when idle (false: sleep in short slices instead).
  UcxBulkThread(MPI_Comm world, const Topology& topo, size_t chunk_bytes, size_t depth, bool wakeup,
                std::function<void()> notify);
  // Stops the thread, then closes the endpoints (outstanding reads end with an error status;
  // their callbacks are not run).
  ~UcxBulkThread();
  UcxBulkThread(const UcxBulkThread&) = delete;
  UcxBulkThread& operator=(const UcxBulkThread&) = delete;

  // Collective over `world`, on the loop thread; the bulk thread pauses meanwhile.
  int register_region(MPI_Comm world, void* base, size_t len);
  // Loop thread. Checks the arguments at once (TransportError), then queues the read.
  void get(int rank, int region, size_t remote_offset, void* local, size_t len, Done done);
  // Loop thread: runs the callbacks of the reads that finished. Returns how many.
  size_t take_finished();
  // Reads asked for whose callbacks have not run yet.
  bool busy() const { return unfinished_.load(std::memory_order_acquire) > 0; }
  // Any thread: reads from `rank` fail, now and later (it was reported failed elsewhere).
  void fail_rank(int rank, const std::string& reason);

 private:
  struct Read {
    int rank, region;
    size_t offset;
    void* local;
    size_t len;
    Done done;
  };
  struct Finished {
    Done done;
    bool ok;
    std::string error;
  };
  void start();
  void stop();
  void run();
  size_t take_inbox();  // bulk thread: queued reads and failures
  void wait_for_work(std::chrono::steady_clock::duration idle);
  void signal();  // wakes the bulk thread

  UcxEndpoints eps_;
  const int rank_;
  // The bulk thread makes the reads; the loop thread only checks a read's arguments against the
  // region table, which changes only while the thread is stopped (register_region).
  UcxRma rma_;
  std::function<void()> notify_;
  std::optional<UcxEventWait> events_;  // when wakeup is on and the worker has an event fd

  std::mutex mu_;
  std::vector<Read> reads_;                            // guarded by mu_
  std::vector<std::pair<int, std::string>> failures_;  // guarded by mu_
  std::vector<Finished> finished_;                     // guarded by mu_
  std::atomic<size_t> unfinished_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace weft::net::detail
