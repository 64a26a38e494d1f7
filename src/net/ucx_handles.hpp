// Owners for UCX's C handles. Each UCX object is released by exactly one small RAII value, so
// the logic code never calls a release function and an exception on any path leaks nothing.
#pragma once

#include <ucp/api/ucp.h>

#include <cstddef>
#include <functional>
#include <utility>

namespace weft::net::detail {

// A handle plus the function that releases it (capturing whatever else the release needs,
// e.g. the worker to progress while an endpoint closes).
template <class H>
class UcxOwned {
 public:
  UcxOwned() = default;
  UcxOwned(H h, std::function<void(H)> release) : h_(h), release_(std::move(release)) {}
  UcxOwned(UcxOwned&& o) noexcept : h_(o.h_), release_(std::move(o.release_)) { o.h_ = H{}; }
  UcxOwned& operator=(UcxOwned&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = o.h_, release_ = std::move(o.release_);
      o.h_ = H{};
    }
    return *this;
  }
  UcxOwned(const UcxOwned&) = delete;
  UcxOwned& operator=(const UcxOwned&) = delete;
  ~UcxOwned() { reset(); }
  void reset() {
    if (h_ != H{} && release_) release_(h_);
    h_ = H{};
  }
  H get() const { return h_; }
  explicit operator bool() const { return h_ != H{}; }

 private:
  H h_{};
  std::function<void(H)> release_;
};

using UcpContext = UcxOwned<ucp_context_h>;
using UcpWorker = UcxOwned<ucp_worker_h>;
using UcpEndpoint = UcxOwned<ucp_ep_h>;
using UcpMemHandle = UcxOwned<ucp_mem_h>;
using UcpRkey = UcxOwned<ucp_rkey_h>;

// Packed buffers (worker address, rkey) carry their length.
struct UcpAddress {
  UcxOwned<ucp_address_t*> addr;
  size_t len = 0;
};
struct UcpRkeyBuffer {
  UcxOwned<void*> buf;
  size_t len = 0;
};

}  // namespace weft::net::detail
