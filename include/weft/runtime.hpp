// Starting and stopping Weft inside an MPI job.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <type_traits>

namespace weft {

// Runs `driver` on rank 0 while every other rank serves tasks and actors; returns the driver's
// exit code on every rank (1 if it threw). Works under mpirun/srun and as a plain ./app (one rank).
// The driver returns int (the exit code) or void (exit code 0).
int run_driver(int argc, char** argv, const std::function<int()>& driver);
template <class F>
int run(int argc, char** argv, F&& driver) {
  if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
    return run_driver(argc, argv, [&]() -> int {
      driver();
      return 0;
    });
  } else {
    return run_driver(argc, argv, [&]() -> int { return static_cast<int>(driver()); });
  }
}

// RAII form for SPMD programs that also do their own MPI work: constructing it starts the
// runtime on every rank (collective); rank 0 is the driver, the others call serve().
class Runtime {
 public:
  Runtime(int* argc, char*** argv);
  ~Runtime();  // collective; rank 0's destructor ends serve() everywhere
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  bool is_driver() const;
  // Serves tasks and actors until the driver shuts the job down; returns the driver's exit code.
  int serve();
  // On the driver: the code serve() returns on the other ranks (default 0).
  void set_exit_code(int code);
};

// This rank and the job's size (valid while the runtime is up).
int rank();
int world_size();
// The node (after virtual-node splitting) of this rank, and how many the job has: node ids run
// 0 .. num_nodes() - 1 (what NodeAffinity::node names).
int node();
int num_nodes();
// The resources rank `r` offers in total (CPU, GPU, memory, custom names), as the scheduler
// counts them; throws weft::Error for a rank the job does not have.
std::map<std::string, double> rank_resources(int r);

}  // namespace weft
