#include "net/ucx_event_wait.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "common/log.hpp"

namespace weft::net::detail {

UcxEventWait::UcxEventWait(ucp_worker_h worker, bool edge_triggered, const char* who) {
  int efd = -1;
  if (ucp_worker_get_efd(worker, &efd) != UCS_OK) {
    WEFT_LOG(Info) << "net: the " << who << " UCX worker has no event fd; its waits poll";
    return;
  }
  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  UniqueFd ev(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  epoll_event u{};
  u.events = EPOLLIN | (edge_triggered ? EPOLLET : 0u);
  u.data.fd = efd;
  epoll_event s{};
  s.events = EPOLLIN;
  s.data.fd = ev.get();
  if (ep.get() < 0 || ev.get() < 0 || ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, efd, &u) != 0 ||
      ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, ev.get(), &s) != 0) {
    WEFT_LOG(Info) << "net: epoll on the " << who
                   << " UCX worker's event fd failed; its waits poll";
    return;
  }
  epoll_ = std::move(ep);
  event_ = std::move(ev);
}

UcxEventWait::Woken UcxEventWait::wait(int timeout_ms) {
  Woken w;
  epoll_event evs[2];
  const int n = ::epoll_wait(epoll_.get(), evs, 2, timeout_ms);
  for (int i = 0; i < n; ++i) {
    if (evs[i].data.fd == event_.get()) {
      uint64_t v;
      [[maybe_unused]] ssize_t r = ::read(event_.get(), &v, sizeof v);
      w.signalled = true;
    } else {
      w.ucx = true;
    }
  }
  return w;
}

void UcxEventWait::signal() {
  if (event_.get() < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(event_.get(), &one, sizeof one);
}

}  // namespace weft::net::detail
