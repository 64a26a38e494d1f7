// Run under `mpirun --enable-recovery -n 2` with WEFT_VIRTUAL_NODES=2: rank 1 dies by SIGKILL
// after setup; rank 0, still sending to it, must get on_peer_failed within seconds, and the
// rank's outbox must stay bounded while it waits. Prints PEER_FAILURE_REPORTED on success.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "common/config.hpp"
#include "mpi_harness.hpp"
#include "net/topology.hpp"
#include "net/transport.hpp"

using namespace weft;
using namespace weft::net;
using namespace weft::net::testing;

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Config cfg = Config::from_env_and_args(&argc, &argv);
  const Topology topo = discover_topology(MPI_COMM_WORLD, cfg);
  if (topo.size != 2 || topo.num_nodes != 2) {
    std::printf("FAILED: needs 2 ranks on 2 (virtual) nodes, got %d on %d\n", topo.size,
                topo.num_nodes);
    return 1;
  }
  Transport t(MPI_COMM_WORLD, topo, cfg);
  FnSink sink;
  int got = 0;
  sink.on_msg = [&](int, uint16_t, const char*, size_t) { ++got; };
  // Prove the link works before the failure.
  t.send(1 - topo.rank, 1, "hello", 5);
  pump(t, sink, [&] { return got == 1; });
  MPI_Barrier(MPI_COMM_WORLD);
  if (topo.rank == 1) raise(SIGKILL);

  std::string reason;
  int failed_rank = -1;
  sink.on_fail = [&](int r, const std::string& why) { failed_rank = r, reason = why; };
  const auto t0 = std::chrono::steady_clock::now();
  char buf[256] = {};
  size_t max_queued = 0;
  for (int i = 0;
       failed_rank < 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20); ++i) {
    t.send(1, 2, buf, sizeof buf);
    t.poll(sink);
    max_queued = std::max(max_queued, t.stats().queued_messages);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (failed_rank == 1) {
    // After the report, sends to the dead rank are dropped: nothing accumulates.
    for (int i = 0; i < 1000; ++i) t.send(1, 2, buf, sizeof buf);
    t.poll(sink);
    const bool bounded = t.stats().queued_messages == 0;
    std::printf("%s after %.1f ms: %s (max queued %zu)\n",
                bounded ? "PEER_FAILURE_REPORTED" : "FAILED: outbox grows after failure", ms,
                reason.c_str(), max_queued);
  } else {
    std::printf("FAILED: no on_peer_failed within %.0f ms\n", ms);
  }
  std::fflush(stdout);
  // MPI_Finalize with a dead peer is not reliable in Open MPI 4; leave directly.
  _exit(failed_rank == 1 ? 0 : 1);
}
