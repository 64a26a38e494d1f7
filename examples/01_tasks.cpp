// 01 — tasks: remote functions, futures, and refs passed as arguments.
//   mpirun -n 4 ./01_tasks      (or just ./01_tasks: a one-rank cluster)
#include <weft/weft.hpp>

#include <cstdio>

int add(int a, int b) { return a + b; }
WEFT_REMOTE(add);

int where() { return weft::rank(); }
WEFT_REMOTE(where);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    weft::ObjectRef<int> a = weft::task(add).remote(1, 2);
    weft::ObjectRef<int> b = weft::task(add).remote(a, 10);  // a is resolved before add runs
    std::printf("add(add(1, 2), 10) = %d\n", weft::get(b));

    std::vector<weft::ObjectRef<int>> ranks;
    for (int i = 0; i < 16; ++i) ranks.push_back(weft::task(where).remote());
    std::printf("16 tasks ran on ranks:");
    for (int r : weft::get(ranks)) std::printf(" %d", r);
    std::printf("\n");
    return 0;
  });
}
