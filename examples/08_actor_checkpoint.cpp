// 08 — actor checkpoints: an actor whose class is serializable writes its state to an HDF5 file
// after every call (checkpoint_every = 1), and when its rank dies it is restarted on another rank
// from that file (max_restarts), with the calls that were in flight re-sent in order
// (max_task_retries). weft::checkpoint(handle) writes one now.
//   mpirun -n 4 ./08_actor_checkpoint
//   WEFT_RESOURCES="1:worker=1;2:worker=1;3:worker=1" mpirun --enable-recovery -n 4 ./08_actor_checkpoint --kill
//   (the actor lives on a worker rank, which SIGKILLs itself at call 50; the sum is the same)
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <vector>
#include <weft/weft.hpp>

class Accumulator {
 public:
  long add(int x, int kill_rank) {
    if (x == 50 && weft::rank() == kill_rank) {
      std::printf("rank %d dies at call %d\n", weft::rank(), x);
      std::fflush(stdout);
      raise(SIGKILL);  // the restart loads the state after call 49 and runs this call again
    }
    sum_ += x;
    ++calls_;
    return sum_;
  }
  int where() const { return weft::rank(); }
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& sum_& calls_;
  }

 private:
  long sum_ = 0;
  int calls_ = 0;
};
WEFT_ACTOR(Accumulator);
WEFT_REMOTE(&Accumulator::add);
WEFT_REMOTE(&Accumulator::where);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [&] {
    bool kill = false;
    for (const auto& a : weft::args()) kill |= a == "--kill";
    weft::ActorOptions o;
    o.max_restarts = -1;
    o.max_task_retries = -1;
    o.checkpoint_every = 1;
    if (kill) o.resources = {{"worker", 1}};  // not on the driver's rank: that one must live
    auto acc = weft::actor<Accumulator>().options(o).remote();
    const int first = acc.task(&Accumulator::where).remote().get();
    std::vector<weft::ObjectRef<long>> sums;
    for (int i = 1; i <= 100; ++i)
      sums.push_back(acc.task(&Accumulator::add).remote(i, kill ? first : -1));
    long last = 0;
    for (auto& s : sums) last = s.get();
    weft::checkpoint(acc).get();  // durable once ready
    std::printf("sum 1..100 = %ld (5050 expected), actor on rank %d, then rank %d\n", last, first,
                acc.task(&Accumulator::where).remote().get());
    return last == 5050 ? 0 : 1;
  });
}
