// The argument checks every bulk mover (UCX RMA, the MPI fallback) makes before a get: a known
// region, a rank of the job, and bytes inside that rank's registered region. One place, so the
// two movers fail with the same clear TransportError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "net/net_error.hpp"

namespace weft::net {

// `who` names the mover in the message ("rma_get", "rma_get (MPI)"). The region's length on
// `rank` is asked for only once region and rank are known to be valid.
template <class RemoteLen>
void check_rma_get(const char* who, int region, size_t regions, int rank, int ranks,
                   size_t remote_offset, size_t len, RemoteLen remote_len) {
  if (region < 0 || static_cast<size_t>(region) >= regions)
    throw TransportError(std::string(who) + ": unknown region " + std::to_string(region) + " (" +
                         std::to_string(regions) + " registered)");
  if (rank < 0 || rank >= ranks)
    throw TransportError(std::string(who) + ": rank " + std::to_string(rank) + " outside [0, " +
                         std::to_string(ranks) + ")");
  const uint64_t rlen = remote_len();
  if (remote_offset > rlen || len > rlen - remote_offset)
    throw TransportError(std::string(who) + ": bytes [" + std::to_string(remote_offset) + ", +" +
                         std::to_string(len) + ") outside rank " + std::to_string(rank) +
                         "'s region " + std::to_string(region) + " of " + std::to_string(rlen) +
                         " bytes");
}

}  // namespace weft::net
