// Transport benchmark. Run with 3 ranks and WEFT_VIRTUAL_NODES=2, which gives node 0 = {0} and
// node 1 = {1, 2}: pair (1,2) shares a node (shared-memory rings), pair (0,1) crosses nodes
// (UCX). Each figure is printed beside raw MPI between the same two ranks measured in this run
// (MPI uses shared memory for both pairs on one host) and the ratio weft / MPI of the printed
// unit (for times lower is better, for rates higher is better).
//   mpirun -n 3 -x WEFT_VIRTUAL_NODES=2 ./weft_net_bench
#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "net/topology.hpp"
#include "net/transport.hpp"

using namespace weft;
using namespace weft::net;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint16_t kPing = 1, kStop = 2, kData = 3, kAck = 4;

struct Sink : MessageSink {
  int last_src = -1;
  uint16_t last_type = 0;
  size_t count = 0, data_count = 0;
  bool stop = false;
  void on_message(int src, uint16_t type, const char*, size_t) override {
    last_src = src, last_type = type;
    if (type == kStop) stop = true;
    if (type == kData) ++data_count;
    ++count;
  }
};

// Idle ranks park here instead of spinning in an MPI barrier (2 cores, 3 ranks).
void sleepy_barrier() {
  MPI_Request r;
  MPI_Ibarrier(MPI_COMM_WORLD, &r);
  int done = 0;
  while (!done) {
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (!done) usleep(50);
  }
}

// The event loop's shape (DESIGN §2): spin on poll() for a while, park only when idle longer.
bool spin_poll(Transport& t, Sink& s, const std::function<bool()>& cond) {
  for (int spins = 0; spins < 2000; ++spins) {
    if (cond()) return true;
    if (t.poll(s) != 0) spins = 0;
  }
  return cond();
}

void pump_until(Transport& t, Sink& s, const std::function<bool()>& cond) {
  while (!spin_poll(t, s, cond)) t.wait(std::chrono::microseconds(100));
}

// Round trip in microseconds between `a` (initiator) and `b`, size bytes each way.
double weft_pingpong(Transport& t, int a, int b, size_t size, int iters) {
  const int me = t.topology().rank;
  std::vector<char> buf(size, 'p');
  Sink s;
  double us = 0;
  if (me == a) {
    for (int i = -iters / 10; i < iters; ++i) {  // negative i: warm-up
      if (i == 0)
        us = -std::chrono::duration<double, std::micro>(Clock::now().time_since_epoch()).count();
      const size_t before = s.count;
      t.send(b, kPing, buf.data(), size);
      pump_until(t, s, [&] { return s.count > before; });
    }
    us += std::chrono::duration<double, std::micro>(Clock::now().time_since_epoch()).count();
    t.send(b, kStop, nullptr, 0);
    pump_until(t, s, [&] { return t.idle(); });
  } else if (me == b) {
    size_t seen = 0;
    while (!s.stop) {
      const size_t before = s.count;
      if (!spin_poll(t, s, [&] { return s.count != before; }))
        t.wait(std::chrono::microseconds(100));
      for (; seen < s.count; ++seen)
        if (s.last_type == kPing) t.send(a, kPing, buf.data(), size);
    }
  }
  sleepy_barrier();
  return us / iters;
}

double mpi_pingpong(int a, int b, size_t size, int iters) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::vector<char> buf(size, 'p');
  double t0 = 0;
  if (me == a || me == b) {
    const int other = me == a ? b : a;
    for (int i = -iters / 10; i < iters; ++i) {
      if (i == 0) t0 = MPI_Wtime();
      if (me == a) {
        MPI_Send(buf.data(), size, MPI_BYTE, other, 0, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), size, MPI_BYTE, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf.data(), size, MPI_BYTE, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), size, MPI_BYTE, other, 0, MPI_COMM_WORLD);
      }
    }
    t0 = MPI_Wtime() - t0;
  }
  sleepy_barrier();
  return t0 * 1e6 / iters;
}

// Messages per second of `size`-byte messages from a to b (b acknowledges the last one).
double weft_rate(Transport& t, int a, int b, size_t size, int count) {
  const int me = t.topology().rank;
  std::vector<char> buf(size, 'r');
  Sink s;
  double secs = 0;
  if (me == a) {
    const auto t0 = Clock::now();
    for (int i = 0; i < count; ++i) {
      t.send(b, kData, buf.data(), size);
      if ((i & 255) == 255) t.poll(s);
    }
    pump_until(t, s, [&] { return s.count > 0; });  // the ack
    secs = std::chrono::duration<double>(Clock::now() - t0).count();
  } else if (me == b) {
    pump_until(t, s, [&] { return s.data_count == static_cast<size_t>(count); });
    t.send(a, kAck, nullptr, 0);
    pump_until(t, s, [&] { return t.idle(); });
  }
  sleepy_barrier();
  return secs > 0 ? count / secs : 0;
}

double mpi_rate(int a, int b, size_t size, int count) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const int kWindow = 64;
  std::vector<char> buf(size * kWindow, 'r');
  std::vector<MPI_Request> reqs(kWindow);
  double t0 = MPI_Wtime(), secs = 0;
  if (me == a || me == b) {
    for (int i = 0; i < count; i += kWindow) {
      for (int j = 0; j < kWindow; ++j) {
        if (me == a)
          MPI_Isend(&buf[j * size], size, MPI_BYTE, b, 1, MPI_COMM_WORLD, &reqs[j]);
        else
          MPI_Irecv(&buf[j * size], size, MPI_BYTE, a, 1, MPI_COMM_WORLD, &reqs[j]);
      }
      MPI_Waitall(kWindow, reqs.data(), MPI_STATUSES_IGNORE);
    }
    char ack = 0;
    if (me == a)
      MPI_Recv(&ack, 1, MPI_BYTE, b, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
      MPI_Send(&ack, 1, MPI_BYTE, a, 2, MPI_COMM_WORLD);
    secs = MPI_Wtime() - t0;
  }
  sleepy_barrier();
  return secs > 0 ? count / secs : 0;
}

// GB/s of rma_get of `size` bytes by `a` from `b`'s region, `reps` times.
double weft_get_bw(Transport& t, int region, std::vector<char>& dst, int a, int b, size_t size,
                   int reps) {
  const int me = t.topology().rank;
  Sink s;
  double secs = 0;
  if (me == a) {
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) {
      bool done = false;
      t.rma_get(b, region, 0, dst.data(), size, [&](bool ok, const std::string& e) {
        if (!ok) std::fprintf(stderr, "rma_get failed: %s\n", e.c_str());
        done = true;
      });
      pump_until(t, s, [&] { return done; });
    }
    secs = std::chrono::duration<double>(Clock::now() - t0).count();
    t.send(b, kStop, nullptr, 0);
    pump_until(t, s, [&] { return t.idle(); });
  } else if (me == b) {
    pump_until(t, s, [&] { return s.stop; });  // serve UCX progress while a reads
  }
  sleepy_barrier();
  return secs > 0 ? size * double(reps) / secs / 1e9 : 0;
}

double mpi_bw(int a, int b, size_t size, int reps) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::vector<char> buf(size, 'b');
  double secs = 0;
  if (me == a || me == b) {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < reps; ++i) {
      if (me == a)
        MPI_Recv(buf.data(), size, MPI_BYTE, b, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else
        MPI_Send(buf.data(), size, MPI_BYTE, a, 3, MPI_COMM_WORLD);
    }
    secs = MPI_Wtime() - t0;
  }
  sleepy_barrier();
  return secs > 0 ? size * double(reps) / secs / 1e9 : 0;
}

double cpu_seconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);  // all threads, the UCX waker included
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// CPU time `b` burns while waiting 0.5 s for one message from `a`: an idle rank should cost
// ~nothing (DESIGN §2). Returns CPU milliseconds on b.
double weft_idle_cpu(Transport& t, int a, int b) {
  const int me = t.topology().rank;
  Sink s;
  double ms = 0;
  if (me == a) {
    usleep(500000);
    t.send(b, kData, nullptr, 0);
    pump_until(t, s, [&] { return t.idle(); });
  } else if (me == b) {
    const double c0 = cpu_seconds();
    while (s.data_count == 0) {
      if (t.poll(s) == 0) t.wait(std::chrono::milliseconds(100));
    }
    ms = (cpu_seconds() - c0) * 1e3;
  }
  sleepy_barrier();
  return ms;
}

double mpi_idle_cpu(int a, int b) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  double ms = 0;
  char x = 0;
  if (me == a) {
    usleep(500000);
    MPI_Send(&x, 1, MPI_BYTE, b, 9, MPI_COMM_WORLD);
  } else if (me == b) {
    const double c0 = cpu_seconds();
    MPI_Recv(&x, 1, MPI_BYTE, a, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ms = (cpu_seconds() - c0) * 1e3;
  }
  sleepy_barrier();
  return ms;
}

double reduce_max(double v) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Config cfg = Config::from_env_and_args(&argc, &argv);
  const Topology topo = discover_topology(MPI_COMM_WORLD, cfg);
  if (topo.size != 3 || topo.node_of_rank[1] != topo.node_of_rank[2] ||
      topo.node_of_rank[0] == topo.node_of_rank[1]) {
    if (topo.rank == 0)
      std::fprintf(stderr, "run with 3 ranks and WEFT_VIRTUAL_NODES=2 (nodes {0}, {1,2})\n");
    MPI_Finalize();
    return 2;
  }
  Transport t(MPI_COMM_WORLD, topo, cfg);
  const size_t kBw = 16u << 20;
  std::vector<char> region(kBw, 'g'), dst(kBw);
  const int reg = t.register_region(region.data(), region.size());

  struct Row {
    std::string what, unit;
    double weft, mpi;
  };
  std::vector<Row> rows;
  struct Pair {
    const char* name;
    int a, b;
    int iters_small, iters_big;
  };
  const Pair pairs[] = {{"same-node", 2, 1, 20000, 2000}, {"cross-node", 0, 1, 2000, 300}};
  for (const Pair& p : pairs) {
    for (size_t size : {size_t{8}, size_t{64} << 10}) {
      const int iters = size == 8 ? p.iters_small : p.iters_big;
      const double w = reduce_max(weft_pingpong(t, p.a, p.b, size, iters));
      const double m = reduce_max(mpi_pingpong(p.a, p.b, size, iters));
      rows.push_back(
          {std::string(p.name) + " ping-pong RTT " + (size == 8 ? "8 B" : "64 KiB"), "us", w, m});
    }
    const int count = p.a == 2 ? 200000 : 50000;
    const double w = reduce_max(weft_rate(t, p.a, p.b, 64, count));
    const double m = reduce_max(mpi_rate(p.a, p.b, 64, count));
    rows.push_back({std::string(p.name) + " message rate 64 B", "Mmsg/s", w / 1e6, m / 1e6});
    const double gw = reduce_max(weft_get_bw(t, reg, dst, p.a, p.b, kBw, 20));
    const double gm = reduce_max(mpi_bw(p.a, p.b, kBw, 20));
    rows.push_back({std::string(p.name) + " rma_get 16 MiB (MPI: send/recv)", "GB/s", gw, gm});
    const double iw = reduce_max(weft_idle_cpu(t, p.a, p.b));
    const double im = reduce_max(mpi_idle_cpu(p.a, p.b));
    rows.push_back({std::string(p.name) + " CPU of a rank idle 0.5 s (MPI_Recv)", "ms", iw, im});
  }
  {  // Bulk reads with the MPI fallback (transfer=mpi, mpi_bulk.hpp): same ranks, same run.
    Config mcfg = cfg;
    mcfg.set("transfer", "mpi");
    Transport tm(MPI_COMM_WORLD, topo, mcfg);
    const int mreg = tm.register_region(region.data(), region.size());
    for (const Pair& p : pairs) {
      const double gw = reduce_max(weft_get_bw(tm, mreg, dst, p.a, p.b, kBw, 20));
      const double gm = reduce_max(mpi_bw(p.a, p.b, kBw, 20));
      rows.push_back(
          {std::string(p.name) + " rma_get 16 MiB transfer=mpi (MPI: send/recv)", "GB/s", gw, gm});
    }
    sleepy_barrier();  // every rank is done with `tm` before any destroys it
  }
  if (topo.rank == 0) {
    std::printf(
        "\nweft net bench: 3 ranks, nodes {0} and {1,2} (WEFT_VIRTUAL_NODES=2); raw MPI\n"
        "between the same ranks in the same run (MPI uses shared memory for both pairs)\n\n");
    std::printf("%-58s %-7s %12s %12s %8s\n", "measure", "unit", "weft", "MPI", "weft/MPI");
    for (const Row& r : rows)
      std::printf("%-58s %-7s %12.3f %12.3f %8.2f\n", r.what.c_str(), r.unit.c_str(), r.weft, r.mpi,
                  r.mpi > 0 ? r.weft / r.mpi : 0.0);
  }
  sleepy_barrier();
  MPI_Finalize();
  return 0;
}
