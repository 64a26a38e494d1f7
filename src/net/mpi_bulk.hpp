// The MPI fallback for bulk reads (DESIGN §4: "MPI is the fallback transport"). Used for a
// region when the job asks for it (`transfer=mpi`) or when UCX cannot register the region's
// memory. Same contract as UcxRma::get — copy [offset, +len) of a peer's registered region into
// local memory, `done` from poll() — but two-sided: the reader posts MPI_Irecv chunks straight
// into its destination and asks the holder, through the message transport (so an idle holder
// wakes at once), to MPI_Isend the bytes from its region. Chunks are pipelined (`depth` in
// flight each way); all chunks of one read share a tag, and MPI's non-overtaking order matches
// them in sequence. Traffic runs on a duplicate of the job's communicator, so it can never match
// the application's own messages. Everything runs on the event-loop thread
// (MPI_THREAD_MULTIPLE). Caveat: MPI towards a dead rank is undefined (Open MPI 4 has no ULFM);
// reads from a failed peer are failed locally and their receives cancelled.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/topology.hpp"

namespace weft::net::detail {

class MpiBulk {
 public:
  using Done = std::function<void(bool ok, const std::string& error)>;
  // Sends one transport message of `len` bytes to `dest` (the transport's bulk message type).
  using SendFn = std::function<void(int dest, const void* data, size_t len)>;

  // Collective over `world` (duplicates it).
  MpiBulk(MPI_Comm world, const Topology& topo, size_t chunk_bytes, size_t depth, SendFn send);
  ~MpiBulk();
  MpiBulk(const MpiBulk&) = delete;
  MpiBulk& operator=(const MpiBulk&) = delete;

  // Collective; every rank calls it in the same order (len may be 0). Returns the local id.
  int register_region(void* base, size_t len);
  // Throws TransportError for an unknown region, rank or an out-of-range read.
  void get(int rank, int region, size_t remote_offset, void* local, size_t len, Done done);
  // A bulk message (a read request, or a holder's refusal) from `src`.
  void on_message(int src, const char* data, size_t len);
  // Fails the reads from `rank` and drops the sends to it.
  void fail_peer(int rank, const std::string& reason);
  // Posts more chunks, completes finished ones, runs callbacks. Returns the work done (0: idle).
  size_t advance();
  uint64_t bytes_read() const { return bytes_read_; }
  bool busy() const { return !reads_.empty() || !sends_.empty() || !finished_.empty(); }

 private:
  struct Region {
    char* base = nullptr;
    std::vector<uint64_t> len;  // per rank
  };
  struct Xfer {  // one read (reader side) or one answer (holder side)
    int peer = -1;
    int tag = 0;
    char* buf = nullptr;
    size_t len = 0, next = 0;
    std::vector<MPI_Request> reqs;  // chunks in flight, oldest first
    std::string error;
    Done done;  // reads only
  };
  struct Finished {
    Done done;
    bool ok;
    std::string error;
  };
  size_t pump(Xfer& x, bool send);
  static void cancel(Xfer& x, bool send);

  MPI_Comm comm_ = MPI_COMM_NULL;
  const Topology& topo_;
  size_t chunk_, depth_;
  SendFn send_;
  int tag_ub_ = 32767;
  int next_tag_ = 1;
  uint64_t bytes_read_ = 0;
  std::vector<Region> regions_;
  std::vector<std::unique_ptr<Xfer>> reads_, sends_;
  std::vector<Finished> finished_;
  std::vector<std::string> failed_;  // per rank: why it failed (empty: alive)
};

}  // namespace weft::net::detail
