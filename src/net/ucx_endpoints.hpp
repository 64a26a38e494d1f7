// The UCX side of one rank: context, worker, and endpoints to the other ranks. Endpoints use
// UCP_ERR_HANDLING_MODE_PEER so that a dead peer becomes an error callback instead of sends that
// "succeed" forever (NOTES.md); failures are recorded here and reported by the transport.
// Worker addresses are exchanged over MPI once, at construction.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "net/topology.hpp"
#include "net/ucx_handles.hpp"

namespace weft::net::detail {

class UcxEndpoints {
 public:
  // Collective over `world`. Connects eagerly to ranks on other nodes; same-node endpoints are
  // created on first use (only RMA needs them). Throws TransportError on every rank if UCX
  // could not be initialised on any rank. `role` names this set in log lines and errors: a rank
  // has one for messages ("net") and one for bulk reads ("bulk", ucx_bulk_thread.hpp).
  // `log_failures`: log an endpoint's failure when it is recorded (the bulk set does not: its
  // failures only fail reads, whose errors say why, and peers that end first are not failures).
  UcxEndpoints(MPI_Comm world, const Topology& topo, std::string role = "net",
               bool log_failures = true);
  ~UcxEndpoints();
  UcxEndpoints(const UcxEndpoints&) = delete;
  UcxEndpoints& operator=(const UcxEndpoints&) = delete;

  ucp_context_h context() const { return context_.get(); }
  ucp_worker_h worker() const { return worker_.get(); }
  // Endpoint to `rank`, or nullptr once that rank has failed.
  ucp_ep_h ep(int rank);

  bool failed(int rank) const { return !failure_[rank].empty(); }
  const std::string& failure(int rank) const { return failure_[rank]; }
  // Records a failure once; later calls for the same rank are ignored. `log`: say so (false when
  // the failure was learnt elsewhere and logged there).
  void mark_failed(int rank, const std::string& reason, bool log = true);
  // Failures recorded since the last call, for the transport to report to its sink.
  std::vector<std::pair<int, std::string>> take_new_failures();
  bool has_new_failures() const { return !new_failures_.empty(); }

  // Closes every endpoint (force; outstanding requests complete with an error status). The
  // transport calls this first in its destructor, while the objects whose callbacks those
  // completions reach still exist.
  void close_all();

  // Runs ucp_worker_progress until it reports no more work (bounded). Returns the count.
  size_t progress();

 private:
  struct PeerArg {
    UcxEndpoints* self;
    int rank;
  };
  static void on_ep_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  void connect(int rank);

  const Topology& topo_;
  const std::string role_;
  const bool log_failures_;
  // Declaration order is teardown order in reverse: endpoints close before the worker goes.
  UcpContext context_;
  UcpWorker worker_;
  std::vector<std::vector<char>> addresses_;  // every rank's worker address
  std::vector<std::unique_ptr<PeerArg>> args_;
  std::vector<UcpEndpoint> eps_;
  std::vector<std::string> failure_;
  std::vector<std::pair<int, std::string>> new_failures_;
  bool closing_ = false;
};

}  // namespace weft::net::detail
