// mpi_probe: the smallest real MPI program that tells the launcher tests how it was started.
//
// Every rank reports its rank, the Slurm task id it was given (SLURM_PROCID, set per task only
// when srun starts the ranks directly) and WEFT_VIRTUAL_NODES; rank 0 gathers them and prints
//   probe OK size=<n> direct_launch=<yes|no> virtual_nodes=<value|unset>
// direct_launch=yes means every rank's SLURM_PROCID equals its MPI rank, i.e. `srun --mpi=pmix`
// wired the world (under mpirun, even inside an allocation, the ranks share one step task).
// An allreduce checks that the ranks really talk to each other, not just that they started.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? -1 : std::atoi(v);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int procid = env_int("SLURM_PROCID");
  std::vector<int> procids(rank == 0 ? size : 0);
  MPI_Gather(&procid, 1, MPI_INT, procids.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);

  // Sum of ranks must be n(n-1)/2: proves a working communicator, not just n started processes.
  long mine = rank;
  long sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

  int rc = 0;
  if (rank == 0) {
    bool direct = true;
    for (int r = 0; r < size; ++r) direct = direct && procids[r] == r;
    const long expect = static_cast<long>(size) * (size - 1) / 2;
    const char* vn = std::getenv("WEFT_VIRTUAL_NODES");
    if (sum != expect) {
      std::printf("probe FAILED allreduce=%ld expected=%ld\n", sum, expect);
      rc = 1;
    } else {
      std::printf("probe OK size=%d direct_launch=%s virtual_nodes=%s\n", size,
                  direct ? "yes" : "no", vn == nullptr ? "unset" : vn);
    }
    std::fflush(stdout);
  }
  // An optional exit code lets the tests check that launchers pass the app's status through.
  if (argc > 1) rc = std::atoi(argv[1]);
  MPI_Finalize();
  return rc;
}
