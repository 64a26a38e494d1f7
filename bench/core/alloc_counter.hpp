// Heap allocations seen by this process: bench binaries link alloc_counter.cpp, which replaces
// the global operator new/delete with counting versions. Only C++ operator new is counted (not C
// malloc from MPI/UCX), and only in the calling process: under mpirun that is rank 0's view.
#pragma once

#include <cstdint>

namespace weft::bench {

struct AllocCount {
  uint64_t allocs = 0;
  uint64_t bytes = 0;
  AllocCount operator-(const AllocCount& o) const { return {allocs - o.allocs, bytes - o.bytes}; }
};

// Sum over every thread of the process since start.
AllocCount alloc_count();

// What `body` allocated (all threads, so runtime threads working for it are included).
template <class F>
AllocCount allocs_during(F&& body) {
  AllocCount before = alloc_count();
  body();
  return alloc_count() - before;
}

}  // namespace weft::bench
