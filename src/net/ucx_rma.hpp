// One-sided reads of registered memory (the object store's segments) with ucp_get_nbx.
// Regions are registered collectively and identified by their registration order, so a region
// id means the same memory role on every rank. A large read is split into chunks with several
// in flight at once (pipelined); completion callbacks run from advance(), never from inside UCX.
// Used by one thread at a time: the bulk thread that progresses its worker (ucx_bulk_thread.hpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/topology.hpp"
#include "net/ucx_endpoints.hpp"

namespace weft::net::detail {

class UcxRma {
 public:
  using Done = std::function<void(bool ok, const std::string& error)>;

  UcxRma(UcxEndpoints& eps, const Topology& topo, size_t chunk_bytes, size_t depth);
  ~UcxRma();
  UcxRma(const UcxRma&) = delete;
  UcxRma& operator=(const UcxRma&) = delete;

  // Collective over `world`; every rank calls it in the same order (len may be 0).
  int register_region(MPI_Comm world, void* base, size_t len);
  // Throws TransportError for an unknown region, rank or an out-of-range read.
  void check(int rank, int region, size_t remote_offset, size_t len) const;
  // Checks as check() does.
  void get(int rank, int region, size_t remote_offset, void* local, size_t len, Done done);
  // Issues more chunks and runs the callbacks of finished reads. Returns how many finished.
  size_t advance();
  bool busy() const { return !ops_.empty() || !finished_.empty(); }

 private:
  struct Remote {
    uint64_t addr = 0;
    uint64_t len = 0;
    std::vector<char> packed;  // rkey as packed by the owner
    UcpRkey rkey;              // unpacked on first use
  };
  struct Region {
    void* base = nullptr;
    size_t len = 0;
    UcpMemHandle memh;
    std::vector<Remote> remote;  // per rank
  };
  struct Op {
    UcxRma* self;
    int rank;
    uint64_t remote_addr;
    ucp_rkey_h rkey;
    char* local;
    size_t len, next = 0;
    size_t outstanding = 0;
    std::string error;
    Done done;
  };
  struct Finished {
    Done done;
    bool ok;
    std::string error;
  };
  static void on_get_done(void* req, ucs_status_t status, void* user);

  UcxEndpoints& eps_;
  const Topology& topo_;
  size_t chunk_, depth_;
  std::vector<std::unique_ptr<Region>> regions_;
  std::deque<std::unique_ptr<Op>> ops_;
  std::vector<Finished> finished_;
};

}  // namespace weft::net::detail
