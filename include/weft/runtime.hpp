// Starting and stopping Weft inside an MPI job.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace weft {

// Runs `driver` on rank 0 while every other rank serves tasks and actors; returns the driver's
// exit code on every rank (1 if it threw). Works under mpirun/srun and as a plain ./app (one rank).
// The driver returns int (the exit code) or void (exit code 0).
//
// The --weft-* flags are removed from argv before the driver runs: argc is updated and
// argv[argc] is NULL, so `for (int i = 1; i < argc; ++i)` sees the application's own arguments
// only (so does weft::args()). Settings that are rejected (an unknown name, a malformed value:
// ConfigError) are reported once, by rank 0, and run returns 2 on every rank. Weft starts once
// per process: a second run (or a Runtime after one) throws weft::Error.
int run_driver(int& argc, char** argv, const std::function<int()>& driver);
template <class F>
int run(int& argc, char** argv, F&& driver) {
  if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
    return run_driver(argc, argv, [&]() -> int {
      driver();
      return 0;
    });
  } else {
    return run_driver(argc, argv, [&]() -> int { return static_cast<int>(driver()); });
  }
}

// The application's own command line: argv[0], then its arguments without the --weft-* flags
// (which Weft took as settings). Filled when the runtime starts; empty before.
const std::vector<std::string>& args();

// RAII form for SPMD programs that also do their own MPI work: constructing it starts the
// runtime on every rank (collective); rank 0 is the driver, the others call serve(). The
// constructor removes the --weft-* flags from *argc/*argv as run does, and throws ConfigError on
// every rank when the settings are rejected (after finalizing MPI, when Weft initialised it).
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
