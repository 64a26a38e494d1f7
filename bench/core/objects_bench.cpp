// Object store figures, each beside a baseline measured in the same run:
//   put bandwidth                 vs memcpy of the same bytes
//   same-node get latency         get_view (zero-copy) and get (decoded copy) vs memcpy
//   cross-node get bandwidth      a borrowed ref pulled over RMA vs MPI send/recv, same ranks
//
//   mpirun -n 2 -x WEFT_VIRTUAL_NODES=2 -x WEFT_RESOURCES=1:special=1 ./weft_objects_bench
//          [--json FILE] [--quick]      (-x WEFT_TRANSFER=mpi: pulls use the MPI fallback)
// (plus the loopback flags of cmake/WeftTesting.cmake). With one rank the cross-node rows are
// skipped.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <weft/weft.hpp>

#include "bench_util.hpp"

using weft::bench::Clock;
using weft::bench::seconds_since;
using Bytes = std::vector<uint8_t>;

namespace {

// Runs on the "special" rank: the object lives in that node's store; the caller borrows it.
weft::ObjectRef<Bytes> make_remote(uint64_t n) { return weft::put(Bytes(n, 7)); }
int node_here() { return weft::node(); }

std::string human(uint64_t n) {
  if (n >= (1ull << 30)) return std::to_string(n >> 30) + " GiB";
  if (n >= (1ull << 20)) return std::to_string(n >> 20) + " MiB";
  return std::to_string(n >> 10) + " KiB";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Raw MPI bandwidth 1 → 0 for `n` bytes (GB/s), before the runtime starts.
double mpi_bandwidth(uint64_t n, int reps) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Bytes buf(n, 1);
  const int chunk = 1 << 30;
  auto xfer = [&] {
    for (uint64_t off = 0; off < n; off += chunk) {
      int len = static_cast<int>(std::min<uint64_t>(chunk, n - off));
      if (rank == 1) MPI_Send(buf.data() + off, len, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      if (rank == 0)
        MPI_Recv(buf.data() + off, len, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  };
  MPI_Barrier(MPI_COMM_WORLD);
  xfer();  // warm-up
  std::vector<double> gbs;
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = Clock::now();
    xfer();
    gbs.push_back(n / seconds_since(t0) / 1e9);
  }
  return median(gbs);
}

}  // namespace

WEFT_REMOTE(make_remote);
WEFT_REMOTE(node_here);

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool quick = weft::bench::has_flag(argc, argv, "--quick");
  const std::vector<uint64_t> xsizes = {1ull << 20, 16ull << 20, 256ull << 20};
  std::map<uint64_t, double> mpi_gbs;
  if (size > 1)
    for (uint64_t n : xsizes) mpi_gbs[n] = mpi_bandwidth(n, quick ? 2 : 5);

  int code = 0;
  {
    weft::Runtime rt(&argc, &argv);
    if (!rt.is_driver()) {
      code = rt.serve();
    } else {
      weft::bench::Report rep;
      // --- put bandwidth vs memcpy ---
      for (uint64_t n : {1ull << 20, 16ull << 20, 256ull << 20}) {
        Bytes src(n, 3), dst(n + 8, 0);
        int reps = n >= (256ull << 20) ? (quick ? 3 : 6) : 20;
        { auto warm = weft::put(src); }
        std::vector<double> put_s, cpy_s;
        for (int i = 0; i < reps; ++i) {
          auto t0 = Clock::now();
          auto r = weft::put(src);
          put_s.push_back(seconds_since(t0));
          t0 = Clock::now();
          std::memcpy(dst.data() + 8, src.data(), n);
          cpy_s.push_back(seconds_since(t0));
        }
        rep.compare("put " + human(n), n / median(put_s) / 1e9, "GB_per_s", "memcpy",
                    n / median(cpy_s) / 1e9);
      }
      // --- same-node get latency ---
      for (uint64_t n :
           {1ull << 10, 64ull << 10, 1ull << 20, 16ull << 20, 256ull << 20, 1ull << 30}) {
        if (quick && n > (256ull << 20)) continue;
        auto r = weft::put(Bytes(n, 5));
        int reps = n >= (256ull << 20) ? 5 : 50;
        std::vector<double> view_us, get_us, cpy_us;
        Bytes dst(n);
        for (int i = 0; i < reps; ++i) {
          auto t0 = Clock::now();
          {
            auto v = weft::get_view(r);
            if (v.size() != n) std::abort();
          }
          view_us.push_back(seconds_since(t0) * 1e6);
          t0 = Clock::now();
          {
            auto v = weft::get(r);
            if (v.size() != n) std::abort();
          }
          get_us.push_back(seconds_since(t0) * 1e6);
          t0 = Clock::now();
          std::memcpy(dst.data(), weft::get_view(r).data(), n);
          cpy_us.push_back(seconds_since(t0) * 1e6);
        }
        rep.compare("get_view " + human(n), median(view_us), "us", "memcpy", median(cpy_us));
        rep.compare("get (copy) " + human(n), median(get_us), "us", "memcpy", median(cpy_us));
      }
      // --- cross-node get bandwidth ---
      weft::TaskOptions special;
      special.resources = {{"special", 1}};
      // WEFT_TRANSFER=mpi: the pulls move with the MPI fallback instead of UCX RMA.
      const char* tr = std::getenv("WEFT_TRANSFER");
      const std::string transfer = tr && std::string(tr) == "mpi" ? " transfer=mpi" : "";
      if (size > 1 && weft::task(node_here).options(special).remote().get() != weft::node()) {
        for (uint64_t n : xsizes) {
          int reps = n >= (256ull << 20) ? (quick ? 2 : 4) : 10;
          std::vector<double> gbs;
          for (int i = 0; i < reps; ++i) {
            weft::ObjectRef<Bytes> remote =
                weft::task(make_remote).options(special).remote(n).get();
            auto t0 = Clock::now();
            auto v = weft::get_view(remote);
            double s = seconds_since(t0);
            if (v.size() != n || v[n - 1] != 7) std::abort();
            gbs.push_back(n / s / 1e9);
          }
          rep.compare("cross-node get " + human(n) + transfer, median(gbs), "GB_per_s",
                      "MPI send/recv", mpi_gbs[n]);
        }
      } else {
        std::printf(
            "cross-node rows skipped: run with 2+ ranks, WEFT_VIRTUAL_NODES=2 and "
            "WEFT_RESOURCES=1:special=1\n");
      }
      rep.print();
      rep.write_json(weft::bench::json_path(argc, argv));
    }
  }
  MPI_Finalize();
  return code;
}
