// The rank's message transport. After bootstrap it never uses MPI: same-node messages go
// through SPSC rings in the node's shared segment (shm_ring.hpp, node_segment.hpp), messages
// to other nodes through UCX active messages (ucx_messenger.hpp), bulk reads through UCX RMA
// (ucx_rma.hpp). Every peer has an outbox, so a full ring, exhausted credits or a dead peer
// delays only that peer and never blocks the event loop. Ordering per (sender, receiver) pair
// is send order on both paths.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "net/limits.hpp"
#include "net/topology.hpp"

namespace weft::net {

class MessageSink {  // implemented by the runtime
 public:
  virtual ~MessageSink() = default;
  // One complete message; data valid only during the call.
  virtual void on_message(int src, uint16_t type, const char* data, size_t len) = 0;
  virtual void on_peer_failed(int rank, const std::string& reason) {}
};

// Counters for tests, benchmarks and `weft status`.
struct TransportStats {
  uint64_t messages_sent = 0;       // handed to a ring, UCX or the self queue
  uint64_t messages_delivered = 0;  // passed to MessageSink::on_message
  size_t max_ucx_in_flight = 0;     // highest AM sends in flight to one peer (<= credits)
  size_t queued_messages = 0;       // currently waiting in outboxes
  size_t queued_bytes = 0;
  uint64_t mpi_bulk_bytes = 0;  // bytes this rank read from peers with the MPI fallback
};

namespace detail {
class TransportImpl;
}

class Transport {
 public:
  // Collective over `world` (uses MPI only here, to exchange UCX addresses and segment names).
  // Config keys: ring_bytes (1M; rounded up to a power of two, >= 4K), credits (64), batch_bytes
  // (64K), rma_chunk_bytes (4M), rma_depth (4), ucx_wakeup (true), transfer ("ucx" or "mpi":
  // how rma_get moves bytes between nodes; MPI is also used for a region UCX cannot register).
  // Throws ConfigError / TransportError.
  Transport(MPI_Comm world, const Topology& topo, const Config& cfg);
  ~Transport();  // local teardown; the caller barriers before destroying
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Queue a message for `dest` (any rank including self). Never blocks; copies the bytes.
  // Messages to a failed peer are dropped (the failure was reported once). Throws
  // TransportError for a bad rank, a reserved type (>= kFirstReservedType) or > 4 GiB.
  void send(int dest, uint16_t type, const void* data, size_t len);
  void send(int dest, uint16_t type, const void* hdr, size_t hdr_len, const void* body,
            size_t body_len);
  // Moves queued messages onto the wire, progresses UCX, delivers received messages to sink.
  // Returns the number of messages delivered plus sent (0 means idle). Called by whoever runs
  // the event loop's turn: one thread at a time, not always the same one.
  size_t poll(MessageSink& sink);
  // Sends what send() queued (poll does this too, before and after reading); the count sent.
  size_t flush();
  // Park until a message may have arrived or wake() was called, at most `timeout`.
  void wait(std::chrono::microseconds timeout);
  // Thread-safe: wake this rank's event loop.
  void wake();
  bool idle() const;  // nothing queued or in flight
  // Treat `rank` as failed from now on, as if the transport had found it dead: what is queued for
  // it is pushed out once more (best effort: a notice queued just before goes first), then its
  // outbox is dropped, nothing more of it is delivered, and the sink hears on_peer_failed(rank,
  // reason) from the next poll, once, whichever way the failure is learnt first. Used for ranks
  // the head declares dead (heartbeats) and to fence them.
  void declare_failed(int rank, const std::string& reason);
  // Whether `rank`'s process runs (exists, not stopped), known only for ranks on this host
  // (HostLiveness); nullopt elsewhere. For the heartbeats' decision on a silent rank.
  std::optional<bool> peer_running(int rank) const;
  const Topology& topology() const;
  TransportStats stats() const;

  // Collective: every rank registers regions in the same order (len may be 0).
  int register_region(void* base, size_t len);
  // Copies [remote_offset, +len) of `rank`'s region into `local`; `done` runs from poll().
  void rma_get(int rank, int region, size_t remote_offset, void* local, size_t len,
               std::function<void(bool ok, const std::string& error)> done);

 private:
  std::unique_ptr<detail::TransportImpl> impl_;
};

}  // namespace weft::net
