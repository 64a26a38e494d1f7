// Bootstrap helper: every rank contributes a byte string of any length and gets everyone's, in
// rank order (MPI_Allgather of the lengths, then MPI_Allgatherv). Startup only: collective.
#pragma once

#include <mpi.h>

#include <string>
#include <string_view>
#include <vector>

namespace weft::net {

std::vector<std::string> allgather_bytes(MPI_Comm comm, std::string_view mine);

}  // namespace weft::net
