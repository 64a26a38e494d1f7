#include "net/ucx_waker.hpp"

#include "common/log.hpp"
#include "common/thread_name.hpp"

namespace weft::net::detail {

UcxWaker::UcxWaker(ucp_worker_h worker, Doorbell* bell, bool enabled)
    : worker_(worker), bell_(bell) {
  if (!enabled) return;
  events_.emplace(worker, /*edge_triggered=*/true, "event loop's");
  if (!events_->valid()) return;
  thread_ = std::thread([this] {
    name_this_thread("ucx waker");
    run();
  });
}

UcxWaker::~UcxWaker() {
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    events_->signal();
    thread_.join();
  }
}

void UcxWaker::run() {
  while (!stop_.load(std::memory_order_acquire)) {
    if (events_->wait(-1).ucx) {
      signalled_.store(true, std::memory_order_seq_cst);
      ring_doorbell(*bell_);
    }
  }
}

bool UcxWaker::arm() {
  signalled_.store(false, std::memory_order_seq_cst);
  return ucp_worker_arm(worker_) == UCS_OK;
}

}  // namespace weft::net::detail
