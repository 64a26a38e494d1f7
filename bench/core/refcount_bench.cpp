// Cost of distributed reference counting (the borrower protocol), each beside a baseline from the
// same run:
//   nested_refs_k        sync round trip of a remote task taking k refs nested in a vector
//                        (owner counts them locally, the executor borrows, releases come back)
//                        vs the same task taking k plain int64 values
//   forwarded_refs_k     the remote task passes the k refs on to a nested task: a borrower
//                        lending costs a kBorrowAdd/kBorrowAck round trip with the owner
//                        vs forwarding k plain values
//   borrow_100k          one remote task borrowing 100,000 refs: from submission until the
//                        owner's borrow table is empty again (every credit released) vs the
//                        same task's round trip with 100,000 plain int64 values
//
//   mpirun -n 2 -x WEFT_RESOURCES=1:far=1 ./weft_refcount_bench [--json FILE]
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
#include <weft/weft.hpp>

#include "bench_util.hpp"

using weft::bench::Clock;
using weft::bench::seconds_since;

namespace {

using Ints = std::vector<int64_t>;
using IntRefs = std::vector<weft::ObjectRef<int64_t>>;

size_t take_values(Ints v) { return v.size(); }
size_t take_refs(IntRefs v) { return v.size(); }
size_t forward_values(Ints v) { return weft::task(take_values).remote(v).get(); }
size_t forward_refs(IntRefs v) { return weft::task(take_refs).remote(v).get(); }

weft::TaskOptions far() {
  weft::TaskOptions o;
  if (weft::world_size() > 1) o.resources = {{"far", 1}};
  return o;
}

template <class F>
double us_per_call(F f, int iters) {
  for (int i = 0; i < iters / 10 + 1; ++i) f();  // warm-up
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) f();
  return seconds_since(t0) * 1e6 / iters;
}

bool wait_borrows_empty(double limit_s) {
  auto t0 = Clock::now();
  while (weft::detail::ref_table_info().borrowed > 0) {
    if (seconds_since(t0) > limit_s) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

WEFT_REMOTE(take_values);
WEFT_REMOTE(take_refs);
WEFT_REMOTE(forward_values);
WEFT_REMOTE(forward_refs);

int main(int argc, char** argv) {
  std::string json;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--json" && i + 1 < argc) json = argv[++i];
  return weft::run(argc, argv, [&] {
    weft::bench::Report report;
    for (int k : {1, 100}) {
      Ints values(k, 7);
      IntRefs refs;
      for (int i = 0; i < k; ++i) refs.push_back(weft::put(int64_t{i}));
      const int iters = k == 1 ? 2000 : 500;
      double base =
          us_per_call([&] { weft::task(take_values).options(far()).remote(values).get(); }, iters);
      double with =
          us_per_call([&] { weft::task(take_refs).options(far()).remote(refs).get(); }, iters);
      report.compare("nested_refs_" + std::to_string(k), with, "us",
                     "plain_values_" + std::to_string(k), base);
      base = us_per_call([&] { weft::task(forward_values).options(far()).remote(values).get(); },
                         iters / 4);
      with = us_per_call([&] { weft::task(forward_refs).options(far()).remote(refs).get(); },
                         iters / 4);
      report.compare("forwarded_refs_" + std::to_string(k), with, "us",
                     "forwarded_values_" + std::to_string(k), base);
    }
    {
      const int n = 100000;
      Ints values(n, 7);
      IntRefs refs;
      for (int i = 0; i < n; ++i) refs.push_back(weft::put(int64_t{i}));
      double base = 0, with = 0, task_part = 0, encode = 0;  // us, mean of 5
      bool ok = true;
      for (int rep = 0; rep < 5; ++rep) {
        auto t0 = Clock::now();
        weft::task(take_values).options(far()).remote(values).get();
        base += seconds_since(t0) * 1e6 / 5;
        t0 = Clock::now();
        weft::task(take_refs).options(far()).remote(refs).get();
        task_part += seconds_since(t0) * 1e6 / 5;
        ok &= wait_borrows_empty(30);  // the executor's 100,000 credits are back
        with += seconds_since(t0) * 1e6 / 5;
        // What encoding and decoding the refs cost by themselves, here (inside a collector, as a
        // call does): the part of the figure that is not the protocol.
        t0 = Clock::now();
        std::vector<weft::detail::StatePtr> seen;
        {
          weft::detail::RefCollector collect(&seen);
          auto bytes = weft::serde::to_bytes(refs);
          auto back = weft::serde::from_bytes<IntRefs>(bytes);
        }
        encode += seconds_since(t0) * 1e6 / 5;
      }
      report.compare("borrow_100k", with, "us", "plain_values_100k", base);
      report.compare("borrow_100k_until_result", task_part, "us", "plain_values_100k", base);
      report.compare("borrow_100k", with, "us", "encode_decode_100k_refs", encode);
      if (!ok) std::printf("borrow_100k: the borrow table did not empty within 30 s\n");
    }
    report.print();
    report.write_json(json);
    return 0;
  });
}
