#include "net/transport.hpp"

#include <algorithm>
#include <deque>
#include <optional>
#include <utility>

#include "common/check.hpp"
#include "common/log.hpp"
#include "net/doorbell.hpp"
#include "net/frame.hpp"
#include "net/host_liveness.hpp"
#include "net/mpi_bulk.hpp"
#include "net/net_error.hpp"
#include "net/node_segment.hpp"
#include "net/outbox.hpp"
#include "net/reassembly.hpp"
#include "net/shm_link.hpp"
#include "net/ucx_bulk_thread.hpp"
#include "net/ucx_endpoints.hpp"
#include "net/ucx_messenger.hpp"
#include "net/ucx_waker.hpp"
#include "weft/errors.hpp"

namespace weft::net {
namespace detail {
namespace {

// How long wait() may park when messages can also arrive over UCX, which does not ring our
// doorbell: the bound on cross-node wake-up latency for an idle rank.
constexpr std::chrono::microseconds kUcxWaitSlice{200};
// How long wait() may park while MPI bulk transfers are in flight: MPI progress rings nothing.
constexpr std::chrono::microseconds kBulkWaitSlice{50};
// Frames drained from one ring per poll, so one busy peer cannot starve the others.
constexpr size_t kDrainBatch = 512;

size_t positive_config(const Config& cfg, const char* key, int64_t def, bool bytes) {
  const int64_t v = bytes ? cfg.get_bytes(key, def) : cfg.get_int(key, def);
  if (v < 1) throw ConfigError(std::string(key) + " must be positive, got " + std::to_string(v));
  return static_cast<size_t>(v);
}

size_t ring_capacity(const Config& cfg) {
  const int64_t v = cfg.get_bytes("ring_bytes", int64_t{1} << 20);
  if (v < 4096 || v > (int64_t{1} << 34))
    throw ConfigError("ring_bytes (WEFT_RING_BYTES) must be between 4K and 16G, got " +
                      std::to_string(v));
  size_t cap = 4096;
  while (cap < static_cast<size_t>(v)) cap <<= 1;
  return cap;
}

}  // namespace

class TransportImpl {
 public:
  TransportImpl(MPI_Comm world, const Topology& topo, const Config& cfg);
  ~TransportImpl();

  void send(int dest, uint16_t type, const void* a, size_t alen, const void* b, size_t blen);
  size_t poll(MessageSink& sink);
  size_t send_queued() { return flush_all(); }
  void wait(std::chrono::microseconds timeout);
  void wake();
  bool idle() const;
  void declare_failed(int rank, const std::string& reason);
  std::optional<bool> peer_running(int rank) const {
    return liveness_ ? liveness_->running(rank) : std::nullopt;
  }
  TransportStats stats() const;
  const Topology& topo() const { return topo_; }
  int register_region(void* base, size_t len);
  void rma_get(int rank, int region, size_t off, void* local, size_t len, UcxRma::Done done);

 private:
  enum class Kind { kSelf, kShm, kUcx };
  struct Peer {
    Kind kind = Kind::kSelf;
    int local = -1;  // index in topo.local_ranks for kShm
    bool failed = false;
    bool queued = false;  // in dirty_
    // Messages written straight into the ring (kShm, nothing queued before them), published
    // with the next flush.
    uint32_t unpublished = 0;
    Outbox out;
    RingWriter writer;  // me -> peer
    RingReader reader;  // peer -> me
    Reassembler reasm;
  };
  // Queues without the checks of send(): the transport's own messages use a reserved type.
  void enqueue(int dest, uint16_t type, const void* a, size_t alen, const void* b, size_t blen);
  // Routes the transport's own messages; everything else goes to the sink.
  void deliver(MessageSink& sink, int src, uint16_t type, const char* data, size_t len);
  size_t flush(int dest);
  size_t flush_all();
  size_t deliver_self(MessageSink& sink);
  void report_failures(MessageSink& sink);
  bool pending_locally() const;
  int self_region(void* base, size_t len);  // one-rank job: no UCX at all

  Topology topo_;
  MPI_Comm world_;
  std::vector<Peer> peers_;
  std::vector<int> dirty_;  // peers whose outbox is not empty
  std::vector<int> shm_peers_;
  NodeSegment segment_;
  Doorbell private_bell_{};  // used when this rank has no node segment
  Doorbell* bell_ = nullptr;
  std::atomic<bool> wake_pending_{false};
  std::unique_ptr<UcxEndpoints> ucx_;
  std::unique_ptr<UcxMessenger> msgr_;
  std::unique_ptr<UcxBulkThread> rma_;  // bulk reads between nodes, on their own worker
  std::unique_ptr<UcxWaker> waker_;
  // Bulk reads: UCX RMA by default; MPI when `transfer=mpi` or UCX cannot register a region.
  bool transfer_mpi_ = false;
  size_t chunk_ = 0, depth_ = 0;
  std::unique_ptr<MpiBulk> bulk_;
  std::unique_ptr<HostLiveness> liveness_;  // peers on this host: is their process alive?
  struct RegionRef {
    bool mpi;
    int id;  // in UcxBulkThread or MpiBulk
  };
  std::vector<RegionRef> regions_;
  std::vector<std::pair<void*, size_t>> self_regions_;
  std::deque<std::pair<UcxRma::Done, std::string>> self_done_;
  bool has_remote_ = false;
  bool partial_progress_ = false;
  MessageSink* sink_ = nullptr;  // set during poll(): UCX delivers from inside progress
  std::vector<std::pair<int, std::string>> declared_;  // declare_failed(), for report_failures
  TransportStats stats_;
};

TransportImpl::TransportImpl(MPI_Comm world, const Topology& topo, const Config& cfg)
    : topo_(topo), world_(world), peers_(topo.size) {
  const size_t cap = ring_capacity(cfg);
  const size_t credits = positive_config(cfg, "credits", 64, false);
  const size_t batch = positive_config(cfg, "batch_bytes", 64 << 10, true);
  const size_t chunk = positive_config(cfg, "rma_chunk_bytes", 4 << 20, true);
  const size_t depth = positive_config(cfg, "rma_depth", 4, false);
  if (batch < 256) throw ConfigError("batch_bytes must be at least 256");
  const std::string transfer = cfg.get("transfer", "ucx");
  if (transfer != "ucx" && transfer != "mpi")
    throw ConfigError("transfer (WEFT_TRANSFER) must be 'ucx' or 'mpi', got '" + transfer + "'");
  transfer_mpi_ = transfer == "mpi";
  const int64_t liveness = cfg.get_int("liveness_interval_ms", 100);
  if (liveness < 0)
    throw ConfigError("liveness_interval_ms (WEFT_LIVENESS_INTERVAL_MS) must be >= 0 (0 turns "
                      "the check off), got " + std::to_string(liveness));
  chunk_ = chunk;
  depth_ = depth;
  int size = 0;
  MPI_Comm_size(world, &size);
  if (size != topo.size || static_cast<int>(topo.node_of_rank.size()) != size)
    throw TransportError("Transport: topology of " + std::to_string(topo.size) +
                         " ranks does not match the communicator of " + std::to_string(size));

  segment_ = NodeSegment(world, topo_, cap);
  bell_ = segment_.valid() ? &segment_.doorbell(topo_.local_index) : &private_bell_;
  for (int r = 0; r < topo_.size; ++r) {
    Peer& p = peers_[r];
    if (r == topo_.rank) {
      p.kind = Kind::kSelf;
    } else if (topo_.same_node(r)) {
      p.kind = Kind::kShm;
      p.local = static_cast<int>(std::find(topo_.local_ranks.begin(), topo_.local_ranks.end(), r) -
                                 topo_.local_ranks.begin());
      p.writer = RingWriter(segment_.ring(topo_.local_index, p.local), cap);
      p.reader = RingReader(segment_.ring(p.local, topo_.local_index), cap);
      shm_peers_.push_back(r);
    } else {
      p.kind = Kind::kUcx;
      has_remote_ = true;
    }
  }
  if (topo_.size > 1) {
    ucx_ = std::make_unique<UcxEndpoints>(world, topo_);
    msgr_ = std::make_unique<UcxMessenger>(*ucx_, topo_.rank, topo_.size, credits, batch);
    msgr_->set_deliver([this](int src, uint16_t type, const char* data, size_t len) {
      if (!sink_) return;
      ++stats_.messages_delivered;
      deliver(*sink_, src, type, data, len);
    });
    const bool wakeup = cfg.get_bool("ucx_wakeup", true);
    rma_ = std::make_unique<UcxBulkThread>(world, topo_, chunk, depth, wakeup, [this] { wake(); });
    waker_ = std::make_unique<UcxWaker>(ucx_->worker(), bell_, wakeup);
    liveness_ = std::make_unique<HostLiveness>(world, topo_, std::chrono::milliseconds(liveness));
  }
}

TransportImpl::~TransportImpl() {
  // Close endpoints while the messenger and RMA objects that their completions reach exist.
  sink_ = nullptr;
  waker_.reset();
  rma_.reset();  // its thread stops before the bulk endpoints close
  if (ucx_) ucx_->close_all();
}

void TransportImpl::send(int dest, uint16_t type, const void* a, size_t alen, const void* b,
                         size_t blen) {
  if (dest < 0 || dest >= topo_.size)
    throw TransportError("send: rank " + std::to_string(dest) + " outside [0, " +
                         std::to_string(topo_.size) + ")");
  if (type >= kFirstReservedType)
    throw TransportError("send: message type " + std::to_string(type) +
                         " is reserved for the transport (use < " +
                         std::to_string(kFirstReservedType) + ")");
  if (alen + blen > kMaxMessageBytes)
    throw TransportError("send: message of " + std::to_string(alen + blen) +
                         " bytes exceeds the 4 GiB limit; move it through the object store");
  enqueue(dest, type, a, alen, b, blen);
}

void TransportImpl::enqueue(int dest, uint16_t type, const void* a, size_t alen, const void* b,
                            size_t blen) {
  Peer& p = peers_[dest];
  if (p.failed) return;
  // A message that fits one frame goes into the peer's ring at once when nothing waits before
  // it: no copy into the outbox (a heap allocation per message), and order is kept. It becomes
  // visible, and the peer's doorbell rings, at the next flush, as for a batch from the outbox.
  const size_t len = alen + blen;
  if (p.kind == Kind::kShm && p.out.empty() && len <= p.writer.max_frame_payload() &&
      p.writer.try_write(type, kFlagFirst | kFlagLast, static_cast<uint32_t>(len), a, alen, b,
                         blen)) {
    ++p.unpublished;
  } else {
    p.out.push(type, a, alen, b, blen);
  }
  if (!p.queued) {
    p.queued = true;
    dirty_.push_back(dest);
  }
}

size_t TransportImpl::flush(int dest) {
  Peer& p = peers_[dest];
  switch (p.kind) {
    case Kind::kSelf:
      return 0;  // delivered by deliver_self()
    case Kind::kShm: {
      bool published = false;
      const size_t n =
          flush_to_ring(p.writer, p.out, &published) + std::exchange(p.unpublished, 0);
      if (published) {
        ring_doorbell(segment_.doorbell(p.local));
        if (n == 0) partial_progress_ = true;  // fragments moved: not idle
      }
      return n;
    }
    case Kind::kUcx:
      return msgr_->flush(dest, p.out);
  }
  return 0;
}

size_t TransportImpl::flush_all() {
  size_t n = 0;
  for (size_t i = 0; i < dirty_.size();) {
    const int d = dirty_[i];
    if (d != topo_.rank) n += flush(d);
    if (peers_[d].out.empty()) {
      peers_[d].queued = false;
      dirty_[i] = dirty_.back();
      dirty_.pop_back();
    } else {
      ++i;
    }
  }
  stats_.messages_sent += n;
  return n;
}

size_t TransportImpl::deliver_self(MessageSink& sink) {
  Peer& me = peers_[topo_.rank];
  // Only what was queued before this call: a handler that sends to itself must not spin here.
  size_t n = me.out.size();
  for (size_t i = 0; i < n; ++i) {
    OutMessage m = me.out.take_front();
    ++stats_.messages_sent;
    ++stats_.messages_delivered;
    deliver(sink, topo_.rank, m.type, m.data.get(), m.len);
  }
  return 2 * n;
}

void TransportImpl::report_failures(MessageSink& sink) {
  std::vector<std::pair<int, std::string>> failures;
  if (liveness_) failures = liveness_->poll();  // this host's peers, shared-memory ones included
  if (ucx_ && ucx_->has_new_failures())
    for (auto& f : ucx_->take_new_failures()) failures.push_back(std::move(f));
  const size_t first_declared = failures.size();
  for (auto& f : declared_) failures.push_back(std::move(f));
  declared_.clear();
  for (size_t i = 0; i < failures.size(); ++i) {
    const auto& [rank, reason] = failures[i];
    Peer& p = peers_[rank];
    if (p.failed) continue;
    p.failed = true;
    p.out.clear();
    if (msgr_) msgr_->drop_peer(rank);
    // Fails its RMA reads; a declared failure was logged where it was declared.
    if (ucx_ && p.kind == Kind::kUcx) {
      ucx_->mark_failed(rank, reason, i < first_declared);
      rma_->fail_rank(rank, reason);
    }
    if (bulk_) bulk_->fail_peer(rank, reason);
    sink.on_peer_failed(rank, reason);
  }
}

size_t TransportImpl::poll(MessageSink& sink) {
  sink_ = &sink;
  partial_progress_ = false;
  size_t n = flush_all();
  for (int r : shm_peers_) {
    Peer& p = peers_[r];
    if (p.failed) continue;  // reported dead: nothing more of it reaches the sink
    size_t frames = 0;
    const size_t d = drain_ring(
        r, p.reader, p.reasm, kDrainBatch,
        [&](uint16_t type, const char* data, size_t len) { deliver(sink, r, type, data, len); },
        &frames);
    stats_.messages_delivered += d;
    n += d;
    if (frames) {
      // Space was freed: a writer parked on a full ring must hear of it (no syscall unless it
      // sleeps). Fragments consumed count as progress even before a message completes.
      ring_doorbell(segment_.doorbell(p.local));
      if (d == 0) partial_progress_ = true;
    }
  }
  if (!peers_[topo_.rank].out.empty()) n += deliver_self(sink);
  if (ucx_) {
    ucx_->progress();
    msgr_->after_progress();
    n += msgr_->take_delivered();
    n += rma_->take_finished();
  }
  report_failures(sink);
  if (bulk_) n += bulk_->advance();
  while (!self_done_.empty()) {
    auto [done, err] = std::move(self_done_.front());
    self_done_.pop_front();
    done(err.empty(), err);
    ++n;
  }
  // Replies produced by the handlers above leave now rather than one poll later.
  n += flush_all();
  sink_ = nullptr;
  return n + (partial_progress_ ? 1 : 0);
}

bool TransportImpl::pending_locally() const {
  if (wake_pending_.load(std::memory_order_relaxed)) return true;
  if (!peers_[topo_.rank].out.empty() || !self_done_.empty()) return true;
  for (int r : shm_peers_)
    if (!peers_[r].failed && peers_[r].reader.has_data()) return true;
  return false;
}

void TransportImpl::wait(std::chrono::microseconds timeout) {
  if (wake_pending_.exchange(false) || pending_locally()) return;
  if (ucx_) {
    if (waker_->started()) {
      // Armed: UCX events now ring the doorbell through the waker thread.
      if (!waker_->arm()) return;  // UCX has events already
    } else if (has_remote_ || msgr_->busy()) {
      timeout = std::min(timeout, kUcxWaitSlice);  // nothing rings for UCX: bound the sleep
    }
  }
  if (bulk_ && bulk_->busy()) timeout = std::min(timeout, kBulkWaitSlice);
  const uint32_t seen = announce_sleep(*bell_);
  if (!pending_locally() && !(waker_ && waker_->signalled())) sleep_on(*bell_, seen, timeout);
  end_sleep(*bell_);
  wake_pending_.store(false, std::memory_order_relaxed);
}

void TransportImpl::wake() {
  wake_pending_.store(true, std::memory_order_seq_cst);
  ring_doorbell(*bell_);
}

bool TransportImpl::idle() const {
  if (!dirty_.empty() || !self_done_.empty()) return false;
  if (msgr_ && msgr_->busy()) return false;
  if (rma_ && rma_->busy()) return false;
  if (bulk_ && bulk_->busy()) return false;
  return true;
}

void TransportImpl::declare_failed(int rank, const std::string& reason) {
  if (rank < 0 || rank >= topo_.size || rank == topo_.rank || peers_[rank].failed) return;
  // A ring write lands even while its reader is stopped; UCX keeps a send already handed to it.
  if (peers_[rank].queued) flush(rank);
  declared_.emplace_back(rank, reason);
}

TransportStats TransportImpl::stats() const {
  TransportStats s = stats_;
  s.max_ucx_in_flight = msgr_ ? msgr_->max_in_flight() : 0;
  s.mpi_bulk_bytes = bulk_ ? bulk_->bytes_read() : 0;
  for (const Peer& p : peers_) s.queued_messages += p.out.size(), s.queued_bytes += p.out.bytes();
  return s;
}

int TransportImpl::self_region(void* base, size_t len) {
  self_regions_.emplace_back(base, len);
  return static_cast<int>(self_regions_.size()) - 1;
}

void TransportImpl::deliver(MessageSink& sink, int src, uint16_t type, const char* data,
                            size_t len) {
  if (type != kBulkMessageType) return sink.on_message(src, type, data, len);
  if (bulk_) bulk_->on_message(src, data, len);
}

int TransportImpl::register_region(void* base, size_t len) {
  if (!rma_) return self_region(base, len);  // a one-rank job: no UCX, no MPI
  if (!transfer_mpi_) {
    try {
      regions_.push_back({false, rma_->register_region(world_, base, len)});
      return static_cast<int>(regions_.size()) - 1;
    } catch (const TransportError& e) {
      // The failure was agreed on collectively inside, so every rank falls back together.
      WEFT_LOG(Warn) << "net: UCX cannot register region " << regions_.size() << " (" << e.what()
                     << "); reads of it move with MPI instead";
    }
  }
  if (!bulk_) {
    bulk_ = std::make_unique<MpiBulk>(world_, topo_, chunk_, depth_,
                                      [this](int dest, const void* data, size_t len) {
                                        enqueue(dest, kBulkMessageType, data, len, nullptr, 0);
                                      });
  }
  regions_.push_back({true, bulk_->register_region(base, len)});
  WEFT_LOG(Info) << "net: reads of region " << regions_.size() - 1 << " (" << len
                 << " bytes here) move with MPI";
  return static_cast<int>(regions_.size()) - 1;
}

void TransportImpl::rma_get(int rank, int region, size_t off, void* local, size_t len,
                            UcxRma::Done done) {
  if (rma_) {
    if (region < 0 || region >= static_cast<int>(regions_.size()))
      throw TransportError("rma_get: unknown region " + std::to_string(region) + " (" +
                           std::to_string(regions_.size()) + " registered)");
    const RegionRef& rr = regions_[region];
    if (rr.mpi) return bulk_->get(rank, rr.id, off, local, len, std::move(done));
    return rma_->get(rank, rr.id, off, local, len, std::move(done));
  }
  // A one-rank job: only our own regions exist.
  if (rank != 0 || region < 0 || region >= static_cast<int>(self_regions_.size()))
    throw TransportError("rma_get: no region " + std::to_string(region) + " on rank " +
                         std::to_string(rank) + " in a one-rank job");
  auto [base, rlen] = self_regions_[region];
  if (off > rlen || len > rlen - off)
    throw TransportError("rma_get: bytes [" + std::to_string(off) + ", +" + std::to_string(len) +
                         ") outside region " + std::to_string(region) + " of " +
                         std::to_string(rlen) + " bytes");
  if (len) std::memcpy(local, static_cast<char*>(base) + off, len);
  self_done_.emplace_back(std::move(done), std::string());
}

}  // namespace detail

Transport::Transport(MPI_Comm world, const Topology& topo, const Config& cfg)
    : impl_(std::make_unique<detail::TransportImpl>(world, topo, cfg)) {}
Transport::~Transport() = default;

void Transport::send(int dest, uint16_t type, const void* data, size_t len) {
  impl_->send(dest, type, data, len, nullptr, 0);
}
void Transport::send(int dest, uint16_t type, const void* hdr, size_t hdr_len, const void* body,
                     size_t body_len) {
  impl_->send(dest, type, hdr, hdr_len, body, body_len);
}
size_t Transport::poll(MessageSink& sink) { return impl_->poll(sink); }
size_t Transport::flush() { return impl_->send_queued(); }
void Transport::wait(std::chrono::microseconds timeout) { impl_->wait(timeout); }
void Transport::wake() { impl_->wake(); }
bool Transport::idle() const { return impl_->idle(); }
void Transport::declare_failed(int rank, const std::string& reason) {
  impl_->declare_failed(rank, reason);
}
std::optional<bool> Transport::peer_running(int rank) const { return impl_->peer_running(rank); }
const Topology& Transport::topology() const { return impl_->topo(); }
TransportStats Transport::stats() const { return impl_->stats(); }
int Transport::register_region(void* base, size_t len) { return impl_->register_region(base, len); }
void Transport::rma_get(int rank, int region, size_t remote_offset, void* local, size_t len,
                        std::function<void(bool ok, const std::string& error)> done) {
  impl_->rma_get(rank, region, remote_offset, local, len, std::move(done));
}

}  // namespace weft::net
