// Messages between nodes over UCX active messages. Queued small messages for one peer are
// coalesced into one AM of up to `batch_bytes` (the frames of frame.hpp, back to back); a
// larger message travels as its own AM, which UCX may send by rendezvous (the receiver pulls it
// with ucp_am_recv_data_nbx). Every AM carries a per-peer sequence number and the receiver
// delivers in sequence, so a rendezvous message overtaken by later eager ones is still
// delivered in send order. Credits: at most `credits` AMs per peer are in flight (sent but not
// completed); the rest wait in the peer's outbox and poll() never blocks on a peer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "net/outbox.hpp"
#include "net/ucx_endpoints.hpp"

namespace weft::net::detail {

class UcxMessenger {
 public:
  using Deliver = std::function<void(int src, uint16_t type, const char* data, size_t len)>;

  UcxMessenger(UcxEndpoints& eps, int rank, int size, size_t credits, size_t batch_bytes);
  ~UcxMessenger();
  UcxMessenger(const UcxMessenger&) = delete;
  UcxMessenger& operator=(const UcxMessenger&) = delete;

  // Hands queued messages for `dest` to UCX while credits last. Returns messages handed over.
  size_t flush(int dest, Outbox& out);
  // Starts rendezvous receives announced during the last worker progress and delivers, in
  // order, whatever became deliverable. Call right after UcxEndpoints::progress().
  // `deliver` is also called from inside progress() for in-order eager AMs, so it must be set.
  void set_deliver(Deliver d) { deliver_ = std::move(d); }
  void after_progress();

  size_t in_flight(int dest) const { return in_flight_[dest]; }
  size_t max_in_flight() const { return max_in_flight_; }
  size_t total_in_flight() const { return total_in_flight_; }
  bool busy() const { return total_in_flight_ > 0 || !rndv_todo_.empty() || rndv_active_ > 0; }
  size_t credits() const { return credits_; }
  // Deliveries made since the last call (for poll()'s count).
  size_t take_delivered() { return std::exchange(delivered_, 0); }
  // Forget everything pending from a failed peer.
  void drop_peer(int rank);

  struct AmHeader;
  struct SendCtx;
  struct RecvCtx;

 private:
  struct Held {
    uint16_t type = 0;
    uint8_t kind = 0;
    bool ready = false;
    std::vector<char> data;
  };
  struct RecvState {
    uint64_t expected = 0;
    std::map<uint64_t, Held> held;  // out-of-order or rendezvous AMs, by sequence number
  };
  struct RndvTodo {
    int src;
    uint64_t seq;
    void* desc;
    size_t len;
  };

  static ucs_status_t on_am(void* arg, const void* header, size_t header_len, void* data,
                            size_t len, const ucp_am_recv_param_t* param);
  static void on_send_done(void* req, ucs_status_t status, void* user);
  static void on_recv_done(void* req, ucs_status_t status, size_t len, void* user);
  void send_am(int dest, SendCtx* ctx, const void* data, size_t len);
  void deliver_am(int src, uint8_t kind, uint16_t type, const char* data, size_t len);
  void drain(int src);

  UcxEndpoints& eps_;
  int rank_, size_;
  size_t credits_, batch_bytes_;
  Deliver deliver_;
  std::vector<uint64_t> next_seq_;
  std::vector<size_t> in_flight_;
  size_t total_in_flight_ = 0, max_in_flight_ = 0;
  std::vector<RecvState> recv_;
  std::vector<RndvTodo> rndv_todo_;
  size_t rndv_active_ = 0;
  size_t delivered_ = 0;
  bool closing_ = false;
};

}  // namespace weft::net::detail
