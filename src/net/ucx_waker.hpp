// Lets an idle rank sleep on its doorbell alone while still hearing UCX arrivals. A helper
// thread blocks on the worker's event fd (edge-triggered, ucx_event_wait.hpp) and, when UCX has
// events, raises a flag and rings the doorbell. The event loop arms the worker (ucp_worker_arm)
// before parking; if UCX already has events, arming fails and it does not park. The flag closes the
// window between arming and announcing sleep (the same Dekker pattern as the doorbell).
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <optional>
#include <thread>

#include "net/doorbell.hpp"
#include "net/ucx_event_wait.hpp"

namespace weft::net::detail {

class UcxWaker {
 public:
  // Returns a waker, or nullptr-equivalent (started() false) when the worker has no event fd.
  // enabled=false: never start (config ucx_wakeup=false), waits then poll every 200 us.
  UcxWaker(ucp_worker_h worker, Doorbell* bell, bool enabled);
  ~UcxWaker();
  UcxWaker(const UcxWaker&) = delete;
  UcxWaker& operator=(const UcxWaker&) = delete;

  bool started() const { return thread_.joinable(); }
  // Event-loop thread, before parking: true when it is safe to sleep until the doorbell rings
  // (the worker is armed); false when UCX has events now (poll instead).
  bool arm();
  // True when UCX signalled since the last arm() (checked in the sleep recheck).
  bool signalled() const { return signalled_.load(std::memory_order_seq_cst); }

 private:
  void run();
  ucp_worker_h worker_;
  Doorbell* bell_;
  std::optional<UcxEventWait> events_;  // when enabled
  std::atomic<bool> stop_{false};
  std::atomic<bool> signalled_{false};
  std::thread thread_;
};

}  // namespace weft::net::detail
