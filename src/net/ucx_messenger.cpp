#include "net/ucx_messenger.hpp"

#include <cstring>
#include <memory>

#include "common/check.hpp"
#include "common/log.hpp"
#include "net/frame.hpp"

namespace weft::net::detail {

inline constexpr unsigned kAmId = 0x57;  // the transport's one AM handler
inline constexpr uint8_t kKindBatch = 1, kKindSingle = 2;
inline constexpr size_t kEagerBytes = 256 << 10;

struct UcxMessenger::AmHeader {
  uint16_t magic;
  uint8_t version;
  uint8_t kind;  // kKindBatch: data is frames; kKindSingle: data is one message of `type`
  uint16_t type;
  uint16_t reserved;
  int32_t src;
  uint32_t reserved2;
  uint64_t seq;
  uint64_t len;
};

// Owns what UCX reads from until the send completes: the header and the payload.
struct UcxMessenger::SendCtx {
  UcxMessenger* self;
  int dest;
  AmHeader hdr;
  std::vector<char> batch;
  std::unique_ptr<char[]> single;
};

struct UcxMessenger::RecvCtx {
  UcxMessenger* self;
  int src;
  uint64_t seq;
};

UcxMessenger::UcxMessenger(UcxEndpoints& eps, int rank, int size, size_t credits,
                           size_t batch_bytes)
    : eps_(eps),
      rank_(rank),
      size_(size),
      credits_(credits),
      batch_bytes_(batch_bytes),
      next_seq_(size),
      in_flight_(size),
      recv_(size) {
  ucp_am_handler_param_t p{};
  p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                 UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  p.id = kAmId;
  p.cb = &UcxMessenger::on_am;
  p.arg = this;
  p.flags = UCP_AM_FLAG_WHOLE_MSG;
  ucs_status_t st = ucp_worker_set_am_recv_handler(eps_.worker(), &p);
  WEFT_CHECK(st == UCS_OK) << "ucp_worker_set_am_recv_handler: " << ucs_status_string(st);
}

UcxMessenger::~UcxMessenger() {
  closing_ = true;
  ucp_am_handler_param_t p{};
  p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
  p.id = kAmId;
  p.cb = nullptr;
  ucp_worker_set_am_recv_handler(eps_.worker(), &p);
}

size_t UcxMessenger::flush(int dest, Outbox& out) {
  size_t n = 0;
  const size_t max_small = batch_bytes_ - sizeof(FrameHeader);
  while (!out.empty() && in_flight_[dest] < credits_ && !eps_.failed(dest)) {
    auto* ctx = new SendCtx{this, dest, {}, {}, {}};
    ctx->hdr = AmHeader{kFrameMagic, kFrameVersion, 0, 0, 0, rank_, 0, next_seq_[dest]++, 0};
    if (out.front().len > max_small) {
      OutMessage m = out.take_front();
      ctx->hdr.kind = kKindSingle;
      ctx->hdr.type = m.type;
      ctx->hdr.len = m.len;
      ctx->single = std::move(m.data);
      send_am(dest, ctx, ctx->single.get(), m.len);
      ++n;
      continue;
    }
    // Coalesce: every frame of the batch is a whole message (small ones are never fragmented
    // here; UCX fragments the AM itself if it must).
    ctx->hdr.kind = kKindBatch;
    while (!out.empty() && out.front().len <= max_small &&
           ctx->batch.size() + frame_bytes(out.front().len) <= batch_bytes_) {
      const OutMessage& m = out.front();
      append_batched(ctx->batch, m.type, m.data.get(), static_cast<uint32_t>(m.len));
      out.pop_front();
      ++n;
    }
    ctx->hdr.len = ctx->batch.size();
    send_am(dest, ctx, ctx->batch.data(), ctx->batch.size());
  }
  return n;
}

void UcxMessenger::send_am(int dest, SendCtx* ctx, const void* data, size_t len) {
  ucp_ep_h ep = eps_.ep(dest);
  if (!ep) {
    delete ctx;
    return;
  }
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  p.cb.send = &UcxMessenger::on_send_done;
  p.user_data = ctx;
  if (len <= kEagerBytes) {
    // Rendezvous costs extra round trips, each a wake-up on a loaded host; up to this size
    // copying through eager fragments is cheaper.
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_AM_SEND_FLAG_EAGER;
  }
  void* req = ucp_am_send_nbx(ep, kAmId, &ctx->hdr, sizeof ctx->hdr, data, len, &p);
  if (req == nullptr) {
    delete ctx;  // completed in place
  } else if (UCS_PTR_IS_ERR(req)) {
    eps_.mark_failed(dest,
                     std::string("ucp_am_send_nbx: ") + ucs_status_string(UCS_PTR_STATUS(req)));
    delete ctx;
  } else {
    ++in_flight_[dest];
    ++total_in_flight_;
    if (in_flight_[dest] > max_in_flight_) max_in_flight_ = in_flight_[dest];
  }
}

void UcxMessenger::on_send_done(void* req, ucs_status_t status, void* user) {
  auto* ctx = static_cast<SendCtx*>(user);
  UcxMessenger* self = ctx->self;
  --self->in_flight_[ctx->dest];
  --self->total_in_flight_;
  if (status != UCS_OK && status != UCS_ERR_CANCELED) {
    self->eps_.mark_failed(ctx->dest, std::string("send failed: ") + ucs_status_string(status));
  }
  delete ctx;
  ucp_request_free(req);
}

ucs_status_t UcxMessenger::on_am(void* arg, const void* header, size_t header_len, void* data,
                                 size_t len, const ucp_am_recv_param_t* param) {
  auto* self = static_cast<UcxMessenger*>(arg);
  AmHeader h;
  if (header_len != sizeof h) {
    WEFT_LOG(Error) << "net: dropping active message with a " << header_len
                    << "-byte header (expected " << sizeof h << ")";
    return UCS_OK;
  }
  std::memcpy(&h, header, sizeof h);
  if (h.magic != kFrameMagic || h.version != kFrameVersion || h.src < 0 || h.src >= self->size_ ||
      h.src == self->rank_ || (h.kind != kKindBatch && h.kind != kKindSingle) || h.len != len ||
      (h.kind == kKindSingle && h.type >= kFirstReservedType && h.type != kBulkMessageType)) {
    WEFT_LOG(Error) << "net: dropping invalid active message (claimed sender " << h.src
                    << ", version " << int(h.version) << ", kind " << int(h.kind) << ", length "
                    << h.len << "/" << len << ")";
    return UCS_OK;
  }
  if (self->closing_ || self->eps_.failed(h.src)) return UCS_OK;
  RecvState& rs = self->recv_[h.src];
  if (h.seq < rs.expected || rs.held.count(h.seq)) {
    WEFT_LOG(Error) << "net: dropping duplicate active message " << h.seq << " from rank " << h.src;
    return UCS_OK;
  }
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    // Pulled after progress returns (UCX forbids nothing here, but keeping UCX calls out of
    // callbacks keeps re-entrancy reasoning simple).
    Held& held = rs.held[h.seq];
    held.type = h.type;
    held.kind = h.kind;
    self->rndv_todo_.push_back({h.src, h.seq, data, len});
    return UCS_INPROGRESS;
  }
  if (h.seq == rs.expected && rs.held.empty()) {
    ++rs.expected;
    self->deliver_am(h.src, h.kind, h.type, static_cast<const char*>(data), len);
    return UCS_OK;
  }
  Held& held = rs.held[h.seq];
  held.type = h.type;
  held.kind = h.kind;
  held.ready = true;
  held.data.assign(static_cast<const char*>(data), static_cast<const char*>(data) + len);
  self->drain(h.src);
  return UCS_OK;
}

void UcxMessenger::after_progress() {
  auto todo = std::exchange(rndv_todo_, {});
  for (const RndvTodo& t : todo) {
    auto it = recv_[t.src].held.find(t.seq);
    if (it == recv_[t.src].held.end()) {  // the peer failed meanwhile
      ucp_am_data_release(eps_.worker(), t.desc);
      continue;
    }
    it->second.data.resize(t.len);
    auto* rc = new RecvCtx{this, t.src, t.seq};
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv_am = &UcxMessenger::on_recv_done;
    p.user_data = rc;
    void* req = ucp_am_recv_data_nbx(eps_.worker(), t.desc, it->second.data.data(), t.len, &p);
    if (req == nullptr) {
      delete rc;
      it->second.ready = true;
      drain(t.src);
    } else if (UCS_PTR_IS_ERR(req)) {
      delete rc;
      eps_.mark_failed(
          t.src, std::string("rendezvous receive: ") + ucs_status_string(UCS_PTR_STATUS(req)));
    } else {
      ++rndv_active_;
    }
  }
}

void UcxMessenger::on_recv_done(void* req, ucs_status_t status, size_t, void* user) {
  auto* rc = static_cast<RecvCtx*>(user);
  UcxMessenger* self = rc->self;
  --self->rndv_active_;
  auto& held = self->recv_[rc->src].held;
  auto it = held.find(rc->seq);
  if (status != UCS_OK) {
    if (status != UCS_ERR_CANCELED)
      self->eps_.mark_failed(rc->src,
                             std::string("rendezvous receive: ") + ucs_status_string(status));
  } else if (it != held.end()) {
    it->second.ready = true;
    self->drain(rc->src);
  }
  delete rc;
  ucp_request_free(req);
}

void UcxMessenger::drain(int src) {
  RecvState& rs = recv_[src];
  while (!rs.held.empty() && rs.held.begin()->first == rs.expected &&
         rs.held.begin()->second.ready) {
    Held h = std::move(rs.held.begin()->second);
    rs.held.erase(rs.held.begin());
    ++rs.expected;
    deliver_am(src, h.kind, h.type, h.data.data(), h.data.size());
  }
}

void UcxMessenger::deliver_am(int src, uint8_t kind, uint16_t type, const char* data, size_t len) {
  if (closing_ || !deliver_) return;
  if (kind == kKindSingle) {
    ++delivered_;
    deliver_(src, type, data, len);
    return;
  }
  const std::string why =
      for_each_batched(data, len, [&](uint16_t type, const char* payload, size_t n) {
        ++delivered_;
        deliver_(src, type, payload, n);
      });
  if (!why.empty()) {
    WEFT_LOG(Error) << "net: bad frame in a batch from rank " << src << " (" << why
                    << "); rest of batch dropped";
  }
}

void UcxMessenger::drop_peer(int rank) { recv_[rank].held.clear(); }

}  // namespace weft::net::detail
