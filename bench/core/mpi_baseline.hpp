// The MPI baseline the core benchmarks print beside their figures: an 8-byte ping-pong between
// ranks 0 and 1, measured with raw MPI before the runtime starts.
#pragma once

#include <mpi.h>

#include "bench_util.hpp"

namespace weft::bench {

// Round trip in µs, the same on every rank (0 when the job has one rank).
inline double mpi_pingpong_rtt_us(int iters) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) return 0;
  char buf[8] = {};
  MPI_Barrier(MPI_COMM_WORLD);
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      MPI_Send(buf, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
  }
  double us = seconds_since(t0) * 1e6 / iters;
  MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return us;
}

}  // namespace weft::bench
