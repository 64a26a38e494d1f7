// Scheduling across ranks: no idle rank beside queued work (the submitter's choice, and work
// stealing when another submitter filled a rank), each scheduling strategy landing where it must,
// hard affinity that can never be met failing at once, and locality counted in bytes moved.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>
#include <weft/weft.hpp>

#include "weft/detail/store_api.hpp"

using namespace std::chrono_literals;

namespace {

int sched_where() { return weft::rank(); }
int sched_node() { return weft::node(); }
int sched_sleep(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return weft::rank();
}
// A second submitter: rank 1 runs this (it holds no CPU), and its own view says rank 1 is free,
// so the probe it submits queues there, behind whatever the driver started on rank 1.
int probe_from_second_owner() { return weft::get(weft::task(sched_where).remote(), 3s); }
std::vector<char> sched_make_big(int bytes) { return std::vector<char>(bytes, 7); }
int sched_consume(const std::vector<char>& v) { return v.size() == 0 ? -1 : weft::node(); }
uint64_t sched_secondary_bytes() { return weft::detail::local_store_info().secondary_bytes; }

class Placed {
 public:
  Placed() = default;
  int node() { return weft::node(); }
};

// The CPU a task holds on rank 1 (rank 1 alone has the "special" resource in these suites).
weft::TaskOptions on_rank1(double cpus, double special) {
  return weft::TaskOptions{.num_cpus = cpus, .resources = {{"special", special}}};
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

WEFT_REMOTE(sched_where);
WEFT_REMOTE(sched_node);
WEFT_REMOTE(sched_sleep);
WEFT_REMOTE(probe_from_second_owner);
WEFT_REMOTE(sched_make_big);
WEFT_REMOTE(sched_consume);
WEFT_REMOTE(sched_secondary_bytes);
WEFT_ACTOR(Placed);
WEFT_REMOTE(&Placed::node);

TEST(Scheduling, ProbesNeverWaitBehindALongTask) {
  if (weft::world_size() < 2) GTEST_SKIP() << "needs an idle rank beside the busy one";
  auto long_task = weft::task(sched_sleep).remote(2500);  // takes this rank's slot
  std::this_thread::sleep_for(50ms);
  for (int i = 0; i < 4; ++i) {
    auto probe = weft::task(sched_where).remote();
    auto [ready, pending] = weft::wait({probe}, 1, 1500ms);
    ASSERT_EQ(ready.size(), 1u) << "probe " << i << " waited behind the 2.5 s task";
  }
  auto [ready, pending] = weft::wait({long_task, weft::task(sched_where).remote()}, 1, 1500ms);
  EXPECT_EQ(ready.size(), 1u);
  long_task.get();
}

TEST(Scheduling, AnIdleRankStealsATaskQueuedBehindALongOne) {
  if (weft::world_size() < 2) GTEST_SKIP() << "needs rank 1 (the special resource) and another";
  // The driver fills rank 1's CPUs; a task on rank 1 (no CPU) submits a probe, which its own
  // submitter queues on rank 1. Only stealing lets it run before the long task ends.
  const double cpus = weft::rank_resources(1).at("CPU");
  auto long_task = weft::task(sched_sleep).options(on_rank1(cpus, 0.5)).remote(2500);
  std::this_thread::sleep_for(100ms);
  auto probe = weft::task(probe_from_second_owner).options(on_rank1(0, 0.5)).remote();
  auto [ready, pending] = weft::wait({probe}, 1, 1500ms);
  ASSERT_EQ(ready.size(), 1u) << "the probe stayed queued behind the long task on rank 1";
  EXPECT_NE(probe.get(), 1);  // it ran on the rank that stole it
  EXPECT_EQ(long_task.get(), 1);
}

TEST(Scheduling, SpreadPutsOneTaskOnEveryRank) {
  std::vector<weft::ObjectRef<int>> refs;
  for (int i = 0; i < weft::world_size(); ++i)
    refs.push_back(weft::task(sched_sleep)
                       .options({.scheduling_strategy = weft::SpreadStrategy{}})
                       .remote(200));
  std::set<int> ranks;
  for (int r : weft::get(refs)) ranks.insert(r);
  EXPECT_EQ(static_cast<int>(ranks.size()), weft::world_size());
}

TEST(Scheduling, HardNodeAffinityRunsOnThatNode) {
  for (int n = 0; n < weft::num_nodes(); ++n) {
    weft::TaskOptions o{.scheduling_strategy = weft::NodeAffinity{.node = n}};
    for (int i = 0; i < 3; ++i) EXPECT_EQ(weft::task(sched_node).options(o).remote().get(), n);
    auto a = weft::actor<Placed>()
                 .options({.scheduling_strategy = weft::NodeAffinity{.node = n}})
                 .remote();
    EXPECT_EQ(a.task(&Placed::node).remote().get(), n);
    weft::kill(a);
  }
}

TEST(Scheduling, HardNodeAffinityToAMissingNodeIsInfeasibleAtOnceAndNamesIt) {
  const int missing = weft::num_nodes() + 5;
  auto r = weft::task(sched_node)
               .options({.scheduling_strategy = weft::NodeAffinity{.node = missing}})
               .remote();
  try {
    r.get(2s);
    FAIL() << "expected InfeasibleError";
  } catch (const weft::InfeasibleError& e) {
    EXPECT_TRUE(contains(e.what(), "node " + std::to_string(missing))) << e.what();
  }
  // An actor's handle comes back at once; ready() and its calls say why it will never exist.
  auto a = weft::actor<Placed>()
               .options({.scheduling_strategy = weft::NodeAffinity{.node = missing}})
               .remote();
  try {
    a.ready().get(2s);
    FAIL() << "expected ActorDiedError";
  } catch (const weft::ActorDiedError& e) {
    EXPECT_TRUE(contains(e.what(), "node " + std::to_string(missing))) << e.what();
    EXPECT_TRUE(contains(e.what(), "never be placed")) << e.what();
  }
  EXPECT_THROW(a.task(&Placed::node).remote().get(2s), weft::ActorDiedError);
}

TEST(Scheduling, HardNodeAffinityToANodeTooSmallIsInfeasibleAndNamesIt) {
  auto r = weft::task(sched_node)
               .options({.num_cpus = 1000, .scheduling_strategy = weft::NodeAffinity{.node = 0}})
               .remote();
  try {
    r.get(2s);
    FAIL() << "expected InfeasibleError";
  } catch (const weft::InfeasibleError& e) {
    EXPECT_TRUE(contains(e.what(), "node 0")) << e.what();
    EXPECT_TRUE(contains(e.what(), "CPU")) << e.what();
  }
}

TEST(Scheduling, SoftNodeAffinityFallsBackWhenTheNodeCannotTakeIt) {
  const int missing = weft::num_nodes() + 5;
  auto r = weft::task(sched_node)
               .options({.scheduling_strategy = weft::NodeAffinity{.node = missing, .soft = true}})
               .remote();
  int n = r.get(5s);
  EXPECT_GE(n, 0);
  EXPECT_LT(n, weft::num_nodes());
}

TEST(Scheduling, RankResourcesAreTheTotalsAndAMissingRankIsAnError) {
  EXPECT_GE(weft::rank_resources(0).at("CPU"), 1.0);
  EXPECT_THROW(weft::rank_resources(weft::world_size()), weft::Error);
}

TEST(Scheduling, ANegativeAffinityNodeIsAnInvalidOption) {
  EXPECT_THROW(weft::task(sched_node)
                   .options({.scheduling_strategy = weft::NodeAffinity{.node = -1}})
                   .remote(),
               weft::Error);
}

TEST(Scheduling, ATaskRunsOnTheNodeThatHoldsItsLargeArgument) {
  if (weft::num_nodes() < 3) GTEST_SKIP() << "needs 3 nodes: the driver's, the holder's, another";
  const int holder = weft::num_nodes() - 1;
  auto at = [](int n) { return weft::TaskOptions{.scheduling_strategy = weft::NodeAffinity{n}}; };
  auto big = weft::task(sched_make_big).options(at(holder)).remote(4 << 20);  // > inline_threshold
  weft::wait({big}, 1, 10s);
  auto secondaries = [&] {
    std::vector<uint64_t> b;
    for (int n = 0; n < weft::num_nodes(); ++n)
      b.push_back(weft::task(sched_secondary_bytes).options(at(n)).remote().get());
    return b;
  };
  const std::vector<uint64_t> before = secondaries();
  // The driver's slot is taken, so without locality these would go to the next free rank and
  // pull 4 MiB each time.
  auto busy = weft::task(sched_sleep).options(at(weft::node())).remote(1500);
  std::this_thread::sleep_for(50ms);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(weft::task(sched_consume).remote(big).get(), holder);
  const std::vector<uint64_t> after = secondaries();
  for (int n = 0; n < weft::num_nodes(); ++n)
    EXPECT_EQ(after[n], before[n]) << "node " << n << " pulled a copy of the argument";
  busy.get();
}

namespace {
int sched_throws(int x) { throw std::runtime_error("bad input " + std::to_string(x)); }
}  // namespace
WEFT_REMOTE(sched_throws);

TEST(Scheduling, ATasksNameReachesItsErrors) {
  try {
    weft::task(sched_throws).options({.name = "verify-batch-7"}).remote(3).get();
    FAIL() << "expected TaskError";
  } catch (const weft::TaskError& e) {
    EXPECT_TRUE(contains(e.function(), "sched_throws")) << e.function();
    EXPECT_TRUE(contains(e.what(), "verify-batch-7")) << e.what();
  }
  auto r = weft::task(sched_node)
               .options({.name = "pinned-probe",
                         .scheduling_strategy = weft::NodeAffinity{.node = weft::num_nodes()}})
               .remote();
  try {
    r.get(2s);
    FAIL() << "expected InfeasibleError";
  } catch (const weft::InfeasibleError& e) {
    EXPECT_TRUE(contains(e.what(), "pinned-probe")) << e.what();
  }
}
