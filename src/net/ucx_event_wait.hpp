// A UCX worker's event fd and an eventfd of our own in one epoll set: a thread blocks on it until
// UCX has events for the worker (after ucp_worker_arm) or another thread calls signal(). Used by
// the waker of the event loop's worker (ucx_waker.hpp) and by the bulk reads' thread
// (ucx_bulk_thread.hpp).
#pragma once

#include <ucp/api/ucp.h>

#include "common/shm_mapping.hpp"

namespace weft::net::detail {

class UcxEventWait {
 public:
  // `edge_triggered`: report UCX's fd once per change (the waker, which only relays). valid()
  // is false, after an Info line naming `who`, when the worker has no event fd or epoll fails:
  // the caller then polls in time slices.
  UcxEventWait(ucp_worker_h worker, bool edge_triggered, const char* who);
  bool valid() const { return epoll_.get() >= 0; }

  struct Woken {
    bool ucx = false;        // the worker has events
    bool signalled = false;  // signal() was called (and is consumed)
  };
  // Blocks up to `timeout_ms` (-1: until woken).
  Woken wait(int timeout_ms);
  // Any thread: wakes a wait(), now or the next one.
  void signal();

 private:
  UniqueFd epoll_, event_;
};

}  // namespace weft::net::detail
