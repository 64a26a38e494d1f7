#include "net/ucx_waker.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "common/log.hpp"
#include "common/thread_name.hpp"

namespace weft::net::detail {

UcxWaker::UcxWaker(ucp_worker_h worker, Doorbell* bell, bool enabled)
    : worker_(worker), bell_(bell) {
  if (!enabled) return;
  int efd = -1;
  if (ucp_worker_get_efd(worker_, &efd) != UCS_OK) {
    WEFT_LOG(Info) << "net: UCX worker has no event fd; idle waits poll every 200 us";
    return;
  }
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  stopfd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  ev.data.fd = efd;
  epoll_event sv{};
  sv.events = EPOLLIN;
  sv.data.fd = stopfd_;
  if (epfd_ < 0 || stopfd_ < 0 || ::epoll_ctl(epfd_, EPOLL_CTL_ADD, efd, &ev) != 0 ||
      ::epoll_ctl(epfd_, EPOLL_CTL_ADD, stopfd_, &sv) != 0) {
    WEFT_LOG(Info) << "net: epoll on the UCX event fd failed; idle waits poll every 200 us";
    return;
  }
  thread_ = std::thread([this] {
    name_this_thread("ucx waker");
    run();
  });
}

UcxWaker::~UcxWaker() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stopfd_, &one, sizeof one);
    thread_.join();
  }
  if (epfd_ >= 0) ::close(epfd_);
  if (stopfd_ >= 0) ::close(stopfd_);
}

void UcxWaker::run() {
  for (;;) {
    epoll_event evs[2];
    const int n = ::epoll_wait(epfd_, evs, 2, -1);
    for (int i = 0; i < n; ++i) {
      if (evs[i].data.fd == stopfd_) return;
    }
    if (n > 0) {
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
