// Multi-rank transport checks, run under mpirun with 2 or 4 ranks, with and without virtual
// nodes (WEFT_VIRTUAL_NODES=2 sends part of the traffic over UCX). Usage:
//   transport_mpi_test [alltoall|big|many|credits|rma|wake|errors|regfail ...]  (no argument: all)
#include <mpi.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "mpi_harness.hpp"
#include "net/frame.hpp"
#include "net/net_error.hpp"
#include "net/topology.hpp"
#include "net/transport.hpp"
#include "weft/errors.hpp"

using namespace weft;
using namespace weft::net;
using namespace weft::net::testing;

namespace {

struct MsgHeader {
  int32_t src;
  uint32_t seq;
  uint64_t sum;
};

// Every rank sends kPerPeer messages of mixed sizes (0 B to 300 KB, some fragmented in the
// ring, some rendezvous over UCX) to every rank including itself; receivers check source,
// per-source order and checksum.
void test_alltoall(MPI_Comm world, const Topology& topo, const Config& cfg) {
  Transport t(world, topo, cfg);
  const int kPerPeer = 200;
  std::vector<uint32_t> next(topo.size, 0);
  int received = 0;
  FnSink sink;
  sink.on_msg = [&](int src, uint16_t type, const char* d, size_t n) {
    NET_EXPECT(n >= sizeof(MsgHeader), "short message %zu", n);
    MsgHeader h;
    std::memcpy(&h, d, sizeof h);
    NET_EXPECT(h.src == src, "src %d claims %d", src, h.src);
    NET_EXPECT(h.seq == next[src], "from %d got seq %u expected %u", src, h.seq, next[src]);
    NET_EXPECT(type == h.seq % 1000, "type %u seq %u", type, h.seq);
    NET_EXPECT(checksum(d + sizeof h, n - sizeof h) == h.sum, "checksum from %d seq %u", src,
               h.seq);
    next[src] = h.seq + 1;
    ++received;
  };
  std::vector<char> body(300000);
  for (int i = 0; i < kPerPeer; ++i) {
    for (int d = 0; d < topo.size; ++d) {
      const size_t len = (i % 10 == 9) ? 300000 : (i * 977u) % 5000;
      fill(body.data(), len, i * 31 + d);
      MsgHeader h{topo.rank, static_cast<uint32_t>(i), checksum(body.data(), len)};
      t.send(d, static_cast<uint16_t>(i % 1000), &h, sizeof h, body.data(), len);
    }
    if (i % 16 == 0) t.poll(sink);  // interleave sending and receiving like an event loop
  }
  const bool ok = pump(t, sink, [&] { return received == kPerPeer * topo.size; });
  NET_EXPECT(ok, "received %d of %d", received, kPerPeer * topo.size);
  serve_until_all_done(t, sink, world);
}

// Ranks 0 and size-1 (on different nodes with virtual nodes) exchange one 100 MB message each,
// followed by a 0-byte one (order across sizes). The other ranks only serve.
void test_big(MPI_Comm world, const Topology& topo, const Config& cfg) {
  Transport t(world, topo, cfg);
  const size_t kBig = 100u << 20;
  const int last = topo.size - 1;
  const bool big_pair = topo.rank == 0 || topo.rank == last;
  const int peer = topo.rank == 0 ? last : 0;
  int stage = 0;
  FnSink sink;
  sink.on_msg = [&](int src, uint16_t type, const char* d, size_t n) {
    NET_EXPECT(big_pair && src == peer, "unexpected message from %d", src);
    if (stage == 0) {
      NET_EXPECT(type == 1 && n == kBig, "type %u len %zu", type, n);
      NET_EXPECT(n == kBig && matches(d, n, 1000 + src), "100 MB payload corrupted");
    } else {
      NET_EXPECT(type == 2 && n == 0, "expected the 0-byte message, got type %u len %zu", type, n);
    }
    ++stage;
  };
  if (big_pair) {
    std::vector<char> big(kBig);
    fill(big.data(), kBig, 1000 + topo.rank);
    t.send(peer, 1, big.data(), big.size());
    t.send(peer, 2, nullptr, 0);
  }
  const int want = big_pair ? 2 : 0;
  const bool ok = pump(
      t, sink, [&] { return stage == want; }, std::chrono::seconds(25));
  NET_EXPECT(ok, "big: got %d of %d messages", stage, want);
  serve_until_all_done(t, sink, world);
}

// 1e5 small messages from every rank to the next one: all arrive, in order.
void test_many(MPI_Comm world, const Topology& topo, const Config& cfg) {
  Transport t(world, topo, cfg);
  const uint32_t kCount = 100000;
  const int to = (topo.rank + 1) % topo.size, from = (topo.rank + topo.size - 1) % topo.size;
  uint32_t next = 0;
  FnSink sink;
  sink.on_msg = [&](int src, uint16_t type, const char* d, size_t n) {
    uint32_t seq = ~0u;
    if (n == 16) std::memcpy(&seq, d, 4);
    NET_EXPECT(src == from && n == 16 && seq == next, "src %d len %zu seq %u expected %u", src, n,
               seq, next);
    next = seq + 1;
  };
  char msg[16] = {};
  for (uint32_t i = 0; i < kCount; ++i) {
    std::memcpy(msg, &i, 4);
    t.send(to, 7, msg, sizeof msg);
    if (i % 1024 == 0) t.poll(sink);
  }
  const bool ok = pump(t, sink, [&] { return next == kCount; });
  NET_EXPECT(ok, "many: received %u of %u", next, kCount);
  serve_until_all_done(t, sink, world);
}

// Credits bound the AM sends in flight to one peer; the rest waits in the outbox, in order.
void test_credits(MPI_Comm world, const Topology& topo, Config cfg) {
  cfg.set("credits", "2");
  Transport t(world, topo, cfg);
  const int kCount = 200;
  const int to = (topo.rank + 1) % topo.size, from = (topo.rank + topo.size - 1) % topo.size;
  int next = 0;
  FnSink sink;
  sink.on_msg = [&](int src, uint16_t, const char* d, size_t n) {
    int seq = -1;
    std::memcpy(&seq, d, sizeof seq);
    NET_EXPECT(src == from && seq == next, "credits: seq %d expected %d", seq, next);
    next = seq + 1;
  };
  // 300 KB: above the eager limit, so each is a rendezvous AM that stays in flight until the
  // receiver pulls it; with 2 credits the rest must wait in the outbox.
  std::vector<char> body(300000);
  size_t max_queued = 0;
  for (int i = 0; i < kCount; ++i) {
    std::memcpy(body.data(), &i, sizeof i);
    t.send(to, 3, body.data(), body.size());
    if (i % 20 == 0) {
      t.poll(sink);
      max_queued = std::max(max_queued, t.stats().queued_messages);
    }
  }
  const bool ok = pump(t, sink, [&] { return next == kCount; });
  NET_EXPECT(ok, "credits: received %d of %d", next, kCount);
  const TransportStats s = t.stats();
  NET_EXPECT(s.max_ucx_in_flight <= 2, "in flight %zu > credits 2", s.max_ucx_in_flight);
  if (!topo.same_node(to)) {
    NET_EXPECT(max_queued > 0, "the outbox should have held messages beyond the credits");
  }
  serve_until_all_done(t, sink, world);
  NET_EXPECT(t.stats().queued_messages == 0, "outbox not drained");
}

// rma_get of 0 B, 1 B, 4 KiB and 64 MiB from the next rank's registered region.
void test_rma(MPI_Comm world, const Topology& topo, const Config& cfg) {
  Transport t(world, topo, cfg);
  const size_t kRegion = (64u << 20) + 4096;
  std::vector<char> region(kRegion);
  fill(region.data(), kRegion, 77 + topo.rank);
  std::vector<char> small(16);
  const int id0 = t.register_region(small.data(), topo.rank == 0 ? 0 : small.size());
  const int id = t.register_region(region.data(), region.size());
  NET_EXPECT(id0 == 0 && id == 1, "region ids %d %d", id0, id);
  const int from = (topo.rank + 1) % topo.size;

  FnSink sink;
  struct Case {
    size_t off, len;
  };
  const Case cases[] = {{0, 0}, {12345, 1}, {4096, 4096}, {4096, 64u << 20}};
  for (const Case& c : cases) {
    std::vector<char> dst(c.len + 1, 'z');
    int done = 0;
    std::string err;
    t.rma_get(from, id, c.off, dst.data(), c.len, [&](bool ok, const std::string& e) {
      done = ok ? 1 : -1;
      err = e;
    });
    pump(t, sink, [&] { return done != 0; });
    NET_EXPECT(done == 1, "rma_get %zu bytes at %zu from %d: %s", c.len, c.off, from, err.c_str());
    NET_EXPECT(matches(dst.data(), c.len, 77 + from, c.off), "rma_get %zu bytes: wrong data",
               c.len);
    NET_EXPECT(dst[c.len] == 'z', "rma_get wrote past %zu bytes", c.len);
  }
  // Out of range and unknown regions are caller errors, reported at once.
  bool threw = false;
  try {
    t.rma_get(from, id, kRegion - 10, region.data(), 11, [](bool, const std::string&) {});
  } catch (const TransportError& e) {
    threw = std::string(e.what()).find("outside") != std::string::npos;
  }
  NET_EXPECT(threw, "out-of-range rma_get must throw TransportError");
  threw = false;
  try {
    t.rma_get(from, 9, 0, region.data(), 1, [](bool, const std::string&) {});
  } catch (const TransportError& e) {
    threw = std::string(e.what()).find("unknown region") != std::string::npos;
  }
  NET_EXPECT(threw, "unknown region must throw TransportError");
  if (cfg.get("transfer", "ucx") == "mpi")  // the reads above really went through MPI
    NET_EXPECT(t.stats().mpi_bulk_bytes == (64u << 20) + 4096 + 1,
               "MPI bulk moved %llu bytes", (unsigned long long)t.stats().mpi_bulk_bytes);
  else
    NET_EXPECT(t.stats().mpi_bulk_bytes == 0, "UCX mode used MPI for bulk");
  serve_until_all_done(t, sink, world);
}

// UCX cannot register a region (a real ucp_mem_map failure: rank 0 offers no address, which UCX
// refuses without its ALLOCATE flag): every rank falls back to MPI for that region together, and
// reads of the other ranks' memory in it still arrive, byte for byte. UCX regions stay on UCX.
void test_register_fallback(MPI_Comm world, const Topology& topo, const Config& cfg) {
  Transport t(world, topo, cfg);
  const size_t kLen = (8u << 20) + 123;
  std::vector<char> region(kLen);
  fill(region.data(), kLen, 5 + topo.rank);
  const int ok_id = t.register_region(region.data(), region.size());
  const int bad_id = t.register_region(topo.rank == 0 ? nullptr : region.data(), kLen);
  FnSink sink;
  const int from = (topo.rank + 1) % topo.size;
  uint64_t want_mpi = cfg.get("transfer", "ucx") == "mpi" ? kLen : 0;
  for (int id : {ok_id, bad_id}) {
    if (id == bad_id && from == 0) continue;  // rank 0 has no memory in the failed region
    if (id == bad_id) want_mpi += kLen;
    std::vector<char> dst(kLen + 1, 'z');
    int done = 0;
    std::string err;
    t.rma_get(from, id, 0, dst.data(), kLen, [&](bool ok, const std::string& e) {
      done = ok ? 1 : -1;
      err = e;
    });
    pump(t, sink, [&] { return done != 0; });
    NET_EXPECT(done == 1, "read of region %d from %d: %s", id, from, err.c_str());
    NET_EXPECT(matches(dst.data(), kLen, 5 + from, 0), "region %d from %d: wrong data", id, from);
    NET_EXPECT(dst[kLen] == 'z', "region %d: wrote past the end", id);
  }
  // Exactly the failed region moved with MPI (all of it when the job asked for MPI).
  NET_EXPECT(t.stats().mpi_bulk_bytes == want_mpi, "rank %d moved %llu bytes with MPI, want %llu",
             topo.rank, (unsigned long long)t.stats().mpi_bulk_bytes,
             (unsigned long long)want_mpi);
  serve_until_all_done(t, sink, world);
}

// A parked rank is woken by an arriving message, over shared memory and over UCX: wait(10 s)
// must return long before its timeout (a lost wake-up would sleep the full 10 s).
void test_wake(MPI_Comm world, const Topology& topo, const Config& cfg) {
  Transport t(world, topo, cfg);
  FnSink sink;
  int got = 0;
  sink.on_msg = [&](int src, uint16_t type, const char*, size_t) { got += src == 0 && type == 9; };
  MPI_Barrier(world);
  if (topo.rank == 0) {
    usleep(200000);  // let the others park first
    for (int r = 1; r < topo.size; ++r) t.send(r, 9, nullptr, 0);
    pump(t, sink, [&] { return t.idle(); });
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    while (got == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(9)) {
      if (t.poll(sink) == 0) t.wait(std::chrono::seconds(10));
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    NET_EXPECT(got == 1 && s < 8, "rank %d (node %d) woke after %.1f s with %d messages", topo.rank,
               topo.node, s, got);
  }
  serve_until_all_done(t, sink, world);
}

// Misuse is a typed error with a clear message, never a crash.
void test_errors(MPI_Comm world, const Topology& topo, const Config& cfg) {
  auto expect_throw = [](const char* what, const char* needle, auto&& fn, auto* tag) {
    using E = std::remove_pointer_t<decltype(tag)>;
    bool ok = false;
    std::string msg;
    try {
      fn();
    } catch (const E& e) {
      msg = e.what();
      ok = msg.find(needle) != std::string::npos;
    } catch (const std::exception& e) {
      msg = std::string("wrong type: ") + e.what();
    }
    NET_EXPECT(ok, "%s: %s", what, msg.c_str());
  };
  {
    Config bad = cfg;
    bad.set("virtual_nodes", "0");
    expect_throw(
        "virtual_nodes=0", "virtual_nodes", [&] { discover_topology(world, bad); },
        static_cast<ConfigError*>(nullptr));
  }
  {
    Config bad = cfg;
    bad.set("ring_bytes", "100");
    expect_throw(
        "ring_bytes=100", "ring_bytes", [&] { Transport x(world, topo, bad); },
        static_cast<ConfigError*>(nullptr));
    bad = cfg;
    bad.set("liveness_interval_ms", "-5");
    expect_throw(
        "liveness_interval_ms=-5", "liveness_interval_ms", [&] { Transport x(world, topo, bad); },
        static_cast<ConfigError*>(nullptr));
    bad = cfg;
    bad.set("credits", "0");
    expect_throw(
        "credits=0", "credits", [&] { Transport x(world, topo, bad); },
        static_cast<ConfigError*>(nullptr));
  }
  Transport t(world, topo, cfg);
  expect_throw(
      "send to -1", "outside", [&] { t.send(-1, 1, "x", 1); },
      static_cast<TransportError*>(nullptr));
  expect_throw(
      "send to size", "outside", [&] { t.send(topo.size, 1, "x", 1); },
      static_cast<TransportError*>(nullptr));
  expect_throw(
      "reserved type", "reserved", [&] { t.send(0, kFirstReservedType, "x", 1); },
      static_cast<TransportError*>(nullptr));
  // rma_get misuse (rma_bounds.hpp, shared by the UCX and MPI movers); collective registration.
  std::vector<char> region(4096);
  const int id = t.register_region(region.data(), region.size());
  std::vector<char> dst(256);
  const int peer = (topo.rank + 1) % topo.size;
  auto get = [&](int rank, int reg, size_t off, size_t len) {
    t.rma_get(rank, reg, off, dst.data(), len, [](bool, const std::string&) {});
  };
  expect_throw(
      "rma_get of an unknown region", "unknown region", [&] { get(peer, id + 1, 0, 1); },
      static_cast<TransportError*>(nullptr));
  expect_throw(
      "rma_get from rank size", "outside [0, ", [&] { get(topo.size, id, 0, 1); },
      static_cast<TransportError*>(nullptr));
  expect_throw(
      "rma_get past the region", "bytes [4000, +200) outside rank",
      [&] { get(peer, id, 4000, 200); },
      static_cast<TransportError*>(nullptr));
  FnSink sink;
  serve_until_all_done(t, sink, world);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Config cfg = Config::from_env_and_args(&argc, &argv);
  const Topology topo = discover_topology(MPI_COMM_WORLD, cfg);
  std::vector<std::string> which(argv + 1, argv + argc);
  if (which.empty())
    which = {"alltoall", "big", "many", "credits", "rma", "wake", "errors", "regfail"};
  for (const std::string& w : which) {
    const int before = g_failures;
    const double t0 = MPI_Wtime();
    if (w == "alltoall")
      test_alltoall(MPI_COMM_WORLD, topo, cfg);
    else if (w == "big")
      test_big(MPI_COMM_WORLD, topo, cfg);
    else if (w == "many")
      test_many(MPI_COMM_WORLD, topo, cfg);
    else if (w == "credits")
      test_credits(MPI_COMM_WORLD, topo, cfg);
    else if (w == "rma")
      test_rma(MPI_COMM_WORLD, topo, cfg);
    else if (w == "wake")
      test_wake(MPI_COMM_WORLD, topo, cfg);
    else if (w == "regfail")
      test_register_fallback(MPI_COMM_WORLD, topo, cfg);
    else if (w == "errors")
      test_errors(MPI_COMM_WORLD, topo, cfg);
    else
      NET_EXPECT(false, "unknown scenario %s", w.c_str());
    if (topo.rank == 0 || g_failures != before)
      std::printf("rank %d/%d nodes %d: %s %s (%.2f s)\n", topo.rank, topo.size, topo.num_nodes,
                  w.c_str(), g_failures == before ? "ok" : "FAILED", MPI_Wtime() - t0);
  }
  int total = 0;
  MPI_Allreduce(&g_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
