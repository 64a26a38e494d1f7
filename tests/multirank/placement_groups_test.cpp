// Placement groups across ranks: strategies on a cluster split into nodes and NVLink domains,
// bundle pinning, child capture, GPU ids, removal while tasks run, and the errors that must come
// at once instead of a hang (infeasible groups, the actor-CPU trap, PENDING with its reason).
//
// Tests marked "suite" need the cluster of the pg_* registrations in CMakeLists.txt (4 ranks in
// 2 virtual nodes, NVLink domains from pg_topology.txt, every rank GPU=2 and pgslot=1, ranks
// 1-3 one "rank<k>" each to pin work on them); they skip elsewhere. The others run in every multirank configuration.
#include <gtest/gtest.h>
#include <weft/weft.hpp>

#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>

using namespace std::chrono_literals;

namespace {

int pg_where() { return weft::rank(); }
std::vector<int> pg_gpus() { return weft::assigned_gpus(); }
int pg_slow(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return ms;
}
int pg_slow_where(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return weft::rank();
}
// Runs in a capturing group and submits a child with default options: the child must land in
// the same group (its GPU is the bundle's device, not a free one of the rank).
std::vector<int> pg_parent() { return weft::task(pg_gpus).options({.num_cpus = 0.5, .num_gpus = 1}).remote().get(); }
// Submits `n` plain 1-CPU tasks from wherever it runs and returns the ranks they ran on.
std::vector<int> pg_fan_out(int n) {
  std::vector<weft::ObjectRef<int>> refs;
  for (int i = 0; i < n; ++i) refs.push_back(weft::task(pg_slow_where).remote(5));
  return weft::get(refs);
}

class PgProbe {
 public:
  explicit PgProbe(int tag) : tag_(tag) {}
  int where() const { return weft::rank(); }
  std::vector<int> gpus() const { return weft::assigned_gpus(); }
  int tag() const { return tag_; }

 private:
  int tag_;
};

// Calls a probe through a handle it was given (another rank than the creator's, maybe).
int pg_call_probe(weft::ActorHandle<PgProbe> h) { return h.task(&PgProbe::tag).remote().get(); }

bool suite() { return std::getenv("WEFTDEV_PG_SUITE") != nullptr && weft::world_size() == 4; }

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

WEFT_REMOTE(pg_where);
WEFT_REMOTE(pg_gpus);
WEFT_REMOTE(pg_slow);
WEFT_REMOTE(pg_parent);
WEFT_REMOTE(pg_slow_where);
WEFT_REMOTE(pg_fan_out);
WEFT_REMOTE(pg_call_probe);
WEFT_ACTOR(PgProbe, int);
WEFT_REMOTE(&PgProbe::where);
WEFT_REMOTE(&PgProbe::gpus);
WEFT_REMOTE(&PgProbe::tag);

using weft::PlacementGroupState;
using weft::Strategy;

// --- every configuration -------------------------------------------------------------------

TEST(PlacementGroups, InfeasibleGroupIsReportedAtOnceWithItsReason) {
  auto t0 = std::chrono::steady_clock::now();
  weft::PlacementGroup pg = weft::placement_group({{{"CPU", 0.5}}, {{"CPU", 100000}}}, Strategy::Pack);
  EXPECT_FALSE(pg.wait(20s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);  // not a timeout: decided at once
  auto st = pg.state();
  EXPECT_EQ(st.state, PlacementGroupState::Infeasible);
  EXPECT_TRUE(contains(st.reason, "CPU")) << st.reason;
  EXPECT_TRUE(pg.bundles().empty());
  // Work aimed at it fails with the group's reason, and so does an actor.
  try {
    weft::task(pg_where).options({.placement_group = pg}).remote().get(10s);
    ADD_FAILURE() << "a task in an infeasible group ran";
  } catch (const weft::InfeasibleError& e) {
    EXPECT_TRUE(contains(e.what(), "INFEASIBLE")) << e.what();
  }
  auto never = weft::actor<PgProbe>(1).options({.placement_group = pg}).remote();
  EXPECT_THROW(never.ready().get(10s), weft::ActorDiedError);
  weft::remove_placement_group(pg);
  EXPECT_EQ(pg.state().state, PlacementGroupState::Removed);
}

TEST(PlacementGroups, UnknownResourceInABundleIsInfeasible) {
  auto pg = weft::placement_group({{{"no_such_thing", 1}}}, Strategy::StrictPack);
  EXPECT_FALSE(pg.wait(10s));
  EXPECT_EQ(pg.state().state, PlacementGroupState::Infeasible);
  EXPECT_TRUE(contains(pg.state().reason, "no_such_thing")) << pg.state().reason;
  pg.remove();
}

TEST(PlacementGroups, BadArgumentsAreTypedErrors) {
  EXPECT_THROW(weft::placement_group({}, Strategy::Pack), weft::Error);
  EXPECT_THROW(weft::placement_group({{{"CPU", -1}}}, Strategy::Pack), weft::Error);
  EXPECT_THROW(weft::remove_placement_group(weft::PlacementGroup{}), weft::Error);
}

TEST(PlacementGroups, TasksAndActorsLandOnTheirBundlesRank) {
  int n = weft::world_size();
  std::vector<std::map<std::string, double>> bundles(n, {{"CPU", 0.5}});
  auto pg = weft::placement_group(bundles, Strategy::Spread, {.name = "pinning"});
  ASSERT_TRUE(pg.wait(30s)) << pg.state().reason;
  auto loc = pg.bundles();
  ASSERT_EQ(static_cast<int>(loc.size()), n);
  std::set<int> ranks;
  for (int b = 0; b < n; ++b) {
    EXPECT_EQ(loc[b].bundle, b);
    ranks.insert(loc[b].rank);
    auto r = weft::task(pg_where).options({.num_cpus = 0.5, .placement_group = pg, .bundle_index = b}).remote();
    EXPECT_EQ(r.get(30s), loc[b].rank) << "bundle " << b;
  }
  auto a = weft::actor<PgProbe>(7)
               .options({.num_cpus = 0.5, .placement_group = pg, .bundle_index = n - 1})
               .remote();
  EXPECT_EQ(a.rank(), loc[n - 1].rank);
  EXPECT_EQ(a.task(&PgProbe::where).remote().get(30s), loc[n - 1].rank);
  weft::kill(a);
  pg.remove();
  EXPECT_THROW(weft::task(pg_where).options({.num_cpus = 0.5, .placement_group = pg}).remote().get(10s),
               weft::InfeasibleError);
}

TEST(PlacementGroups, ActorCpuTrapIsReportedInsteadOfHanging) {
  // Bundles without enough CPU for the actor: Ray leaves the actor pending forever.
  auto pg = weft::placement_group({{{"CPU", 0.5}}}, Strategy::Pack);
  ASSERT_TRUE(pg.wait(30s)) << pg.state().reason;
  auto t0 = std::chrono::steady_clock::now();
  auto a = weft::actor<PgProbe>(1).options({.num_cpus = 1, .placement_group = pg}).remote();
  try {
    a.ready().get(10s);
    ADD_FAILURE() << "an actor that fits no bundle was created";
  } catch (const weft::ActorDiedError& e) {
    EXPECT_TRUE(contains(e.what(), "fits no bundle")) << e.what();
    EXPECT_TRUE(contains(e.what(), "PgProbe")) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_THROW(weft::task(pg_where).options({.num_cpus = 0.5, .placement_group = pg, .bundle_index = 3}).remote().get(10s),
               weft::InfeasibleError);  // out of range
  pg.remove();
}

// --- the pg suite's cluster: 4 ranks, nodes {0,1} {2,3}, domains rack-a / rack-b ---------------

TEST(PlacementGroups, StrictPackStaysOnOneNodePackSpillsOver) {
  if (!suite()) GTEST_SKIP() << "needs the pg suite's cluster";
  auto strict = weft::placement_group({{{"pgslot", 1}}, {{"pgslot", 1}}}, Strategy::StrictPack);
  ASSERT_TRUE(strict.wait(30s)) << strict.state().reason;
  auto loc = strict.bundles();
  EXPECT_EQ(loc[0].node, loc[1].node);
  strict.remove();
  // Three slots fit no node (2 ranks × 1 slot each): STRICT_PACK never, PACK across nodes.
  auto never = weft::placement_group({{{"pgslot", 1}}, {{"pgslot", 1}}, {{"pgslot", 1}}},
                                     Strategy::StrictPack);
  EXPECT_FALSE(never.wait(10s));
  EXPECT_EQ(never.state().state, PlacementGroupState::Infeasible) << never.state().reason;
  never.remove();
  auto pack = weft::placement_group({{{"pgslot", 1}}, {{"pgslot", 1}}, {{"pgslot", 1}}},
                                    Strategy::Pack);
  ASSERT_TRUE(pack.wait(30s)) << pack.state().reason;
  auto p = pack.bundles();
  EXPECT_EQ(p[0].node, p[1].node);  // consecutive bundles together
  EXPECT_NE(p[1].node, p[2].node);
  pack.remove();
}

TEST(PlacementGroups, StrictSpreadUsesDistinctNodes) {
  if (!suite()) GTEST_SKIP() << "needs the pg suite's cluster";
  auto pg = weft::placement_group({{{"CPU", 0.5}}, {{"CPU", 0.5}}}, Strategy::StrictSpread);
  ASSERT_TRUE(pg.wait(30s)) << pg.state().reason;
  auto loc = pg.bundles();
  EXPECT_NE(loc[0].node, loc[1].node);
  pg.remove();
  auto three = weft::placement_group({{{"CPU", 0.5}}, {{"CPU", 0.5}}, {{"CPU", 0.5}}},
                                     Strategy::StrictSpread);
  EXPECT_FALSE(three.wait(10s));
  EXPECT_EQ(three.state().state, PlacementGroupState::Infeasible);
  EXPECT_TRUE(contains(three.state().reason, "node")) << three.state().reason;
  three.remove();
}

TEST(PlacementGroups, NvlinkDomainKeepsBundlesInOneConfiguredDomain) {
  if (!suite()) GTEST_SKIP() << "needs the pg suite's cluster";
  auto pg = weft::placement_group({{{"GPU", 2}}, {{"GPU", 2}}}, Strategy::NvlinkDomain);
  ASSERT_TRUE(pg.wait(30s)) << pg.state().reason;
  auto loc = pg.bundles();
  EXPECT_EQ(loc[0].nvlink_domain, loc[1].nvlink_domain);
  EXPECT_EQ(loc[0].node, loc[1].node);  // a domain is one node here
  pg.remove();
  // Six GPUs: more than one domain (2 ranks × 2 GPUs) holds, though the job has 8.
  auto big = weft::placement_group({{{"GPU", 2}}, {{"GPU", 2}}, {{"GPU", 2}}},
                                   Strategy::NvlinkDomain);
  EXPECT_FALSE(big.wait(10s));
  EXPECT_EQ(big.state().state, PlacementGroupState::Infeasible);
  EXPECT_TRUE(contains(big.state().reason, "NVLink") || contains(big.state().reason, "domain"))
      << big.state().reason;
  big.remove();
}

TEST(PlacementGroups, GpuIdsAreDistinctAndStable) {
  if (!suite()) GTEST_SKIP() << "needs the pg suite's cluster";
  auto pg = weft::placement_group({{{"GPU", 1}}, {{"GPU", 1}}}, Strategy::StrictPack);
  ASSERT_TRUE(pg.wait(30s)) << pg.state().reason;
  auto loc = pg.bundles();
  ASSERT_EQ(loc[0].gpu_ids.size(), 1u);
  ASSERT_EQ(loc[1].gpu_ids.size(), 1u);
  if (loc[0].rank == loc[1].rank) {
    EXPECT_NE(loc[0].gpu_ids, loc[1].gpu_ids);
  }
  for (int b = 0; b < 2; ++b) {
    for (int round = 0; round < 2; ++round) {
      auto g = weft::task(pg_gpus)
                   .options({.num_cpus = 0, .num_gpus = 1, .placement_group = pg, .bundle_index = b})
                   .remote()
                   .get(30s);
      EXPECT_EQ(g, loc[b].gpu_ids) << "bundle " << b << " round " << round;
    }
  }
  auto a = weft::actor<PgProbe>(1)
               .options({.num_gpus = 1, .placement_group = pg, .bundle_index = 1})
               .remote();
  EXPECT_EQ(a.task(&PgProbe::gpus).remote().get(30s), loc[1].gpu_ids);
  weft::kill(a);
  // Outside groups, a GPU task still gets a device id of its rank.
  auto plain = weft::task(pg_gpus).options({.num_cpus = 0.5, .num_gpus = 1}).remote().get(30s);
  EXPECT_EQ(plain.size(), 1u);
  pg.remove();
}

TEST(PlacementGroups, ChildTasksAreCapturedIntoTheParentsGroup) {
  if (!suite()) GTEST_SKIP() << "needs the pg suite's cluster";
  // One bundle with one of the rank's two GPUs; the child asks for a GPU without naming a group.
  auto pg = weft::placement_group({{{"CPU", 1}, {"GPU", 1}}}, Strategy::Pack);
  ASSERT_TRUE(pg.wait(30s)) << pg.state().reason;
  auto loc = pg.bundles();
  auto child_gpus = weft::task(pg_parent)
                        .options({.num_cpus = 0.5, .placement_group = pg, .capture_child_tasks = true})
                        .remote()
                        .get(30s);
  EXPECT_EQ(child_gpus, loc[0].gpu_ids);
  pg.remove();
}

TEST(PlacementGroups, WaitTimesOutPendingWithReasonThenCreatesWhenRoomFrees) {
  if (!suite()) GTEST_SKIP() << "needs the pg suite's cluster";
  auto all = weft::placement_group({{{"pgslot", 1}}, {{"pgslot", 1}}, {{"pgslot", 1}}, {{"pgslot", 1}}},
                                   Strategy::Spread);
  ASSERT_TRUE(all.wait(30s)) << all.state().reason;
  auto later = weft::placement_group({{{"pgslot", 1}}}, Strategy::Pack, {.name = "later"});
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(later.wait(300ms));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 250ms);
  auto st = later.state();
  EXPECT_EQ(st.state, PlacementGroupState::Pending);
  EXPECT_TRUE(contains(st.reason, "pgslot")) << st.reason;
  all.remove();  // frees the slots: the head re-plans the pending group
  EXPECT_TRUE(later.wait(30s)) << later.state().reason;
  later.remove();
}

TEST(PlacementGroups, RemoveLetsRunningTasksFinishAndFailsLaterOnes) {
  if (!suite()) GTEST_SKIP() << "needs the pg suite's cluster";
  auto pg = weft::placement_group({{{"CPU", 1}, {"pgslot", 1}}}, Strategy::Pack);
  ASSERT_TRUE(pg.wait(30s)) << pg.state().reason;
  auto running = weft::task(pg_slow).options({.num_cpus = 1, .placement_group = pg}).remote(400);
  std::this_thread::sleep_for(100ms);
  pg.remove();
  EXPECT_EQ(running.get(30s), 400);
  EXPECT_THROW(weft::task(pg_slow).options({.num_cpus = 1, .placement_group = pg}).remote(1).get(10s),
               weft::InfeasibleError);
  // Its slot is free again for a new group.
  auto again = weft::placement_group({{{"pgslot", 1}}, {{"pgslot", 1}}, {{"pgslot", 1}}, {{"pgslot", 1}}},
                                     Strategy::Spread);
  EXPECT_TRUE(again.wait(30s)) << again.state().reason;
  again.remove();
}

// A plain task must not be sent where a bundle leaves it no room (it would wait for ever):
// the submitter places it beside the group's reservation.
TEST(PlacementGroups, PlainTasksGoWhereTheyFitBesideBundles) {
  auto pg = weft::placement_group({{{"CPU", 0.25}}, {{"CPU", 0.25}}}, weft::Strategy::StrictPack);
  ASSERT_TRUE(pg.wait(std::chrono::seconds(10))) << pg.state().reason;
  std::vector<weft::ObjectRef<int>> refs;
  for (int i = 0; i < 8; ++i) refs.push_back(weft::task(pg_where).remote());
  auto [ready, pending] = weft::wait(refs, refs.size(), std::chrono::seconds(20));
  EXPECT_EQ(ready.size(), refs.size()) << "plain tasks stuck beside a placement group";
  pg.remove();
}

// An actor of a group that is not placed yet: remote() returns at once; calls queue until the
// group is created, through the creator's handle and through a copy on another rank.
TEST(PlacementGroups, ActorInPendingGroupReturnsAtOnceAndCallsWaitForTheGroup) {
  if (!suite()) GTEST_SKIP() << "needs the pg suite's cluster";
  auto all = weft::placement_group({{{"pgslot", 1}}, {{"pgslot", 1}}, {{"pgslot", 1}}, {{"pgslot", 1}}},
                                   Strategy::Spread);
  ASSERT_TRUE(all.wait(30s)) << all.state().reason;
  auto later = weft::placement_group({{{"pgslot", 1}}}, Strategy::Pack, {.name = "later-actor"});
  EXPECT_FALSE(later.wait(200ms));
  auto t0 = std::chrono::steady_clock::now();
  auto a = weft::actor<PgProbe>(42).options({.placement_group = later}).remote();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s) << "creation blocked on a PENDING group";
  auto direct = a.task(&PgProbe::where).remote();
  auto via_rank3 = weft::task(pg_call_probe)
                       .options({.num_cpus = 0, .resources = {{"rank3", 1}}})
                       .remote(a);
  auto [ready, pending] = weft::wait(std::vector{direct}, 1, 300ms);
  EXPECT_TRUE(ready.empty()) << "a call ran before its actor's group was created";
  all.remove();  // room for `later`: it is created, the actor placed, the calls sent
  ASSERT_TRUE(later.wait(30s)) << later.state().reason;
  EXPECT_EQ(direct.get(30s), later.bundles()[0].rank);
  EXPECT_EQ(via_rank3.get(30s), 42);
  weft::kill(a);
  later.remove();
}

TEST(PlacementGroups, CallsFailTypedWhenAPendingActorsGroupIsRemoved) {
  if (!suite()) GTEST_SKIP() << "needs the pg suite's cluster";
  auto all = weft::placement_group({{{"pgslot", 1}}, {{"pgslot", 1}}, {{"pgslot", 1}}, {{"pgslot", 1}}},
                                   Strategy::Spread);
  ASSERT_TRUE(all.wait(30s)) << all.state().reason;
  auto never = weft::placement_group({{{"pgslot", 1}}}, Strategy::Pack);
  EXPECT_FALSE(never.wait(100ms));
  auto a = weft::actor<PgProbe>(1).options({.placement_group = never}).remote();
  auto call = a.task(&PgProbe::tag).remote();
  never.remove();
  try {
    call.get(30s);
    ADD_FAILURE() << "a call on an actor of a removed group ran";
  } catch (const weft::ActorDiedError& e) {
    EXPECT_TRUE(contains(e.what(), "was never created")) << e.what();
    EXPECT_TRUE(contains(e.what(), "removed")) << e.what();
  }
  all.remove();
}

// The actor is created without waiting for the group: the handle leaves at once and its calls
// fail with ActorDiedError giving the group's INFEASIBLE reason, which names the resource.
TEST(PlacementGroups, CallsFailTypedWhenAnActorsGroupTurnsOutInfeasible) {
  auto pg = weft::placement_group({{{"CPU", 100000}}}, Strategy::Pack);
  auto a = weft::actor<PgProbe>(1).options({.placement_group = pg}).remote();
  try {
    a.task(&PgProbe::tag).remote().get(30s);
    ADD_FAILURE() << "a call on an actor of an infeasible group ran";
  } catch (const weft::ActorDiedError& e) {
    EXPECT_TRUE(contains(e.what(), "INFEASIBLE")) << e.what();
    EXPECT_TRUE(contains(e.what(), "CPU")) << e.what();
  }
  pg.remove();
}

// Every rank learns a group's reservations, not only the ranks that follow the group: plain
// tasks submitted on ranks 1 and 3 never go to rank 2, whose CPUs the group holds.
TEST(PlacementGroups, PlainTasksFromAnyRankAvoidARankWhoseCpusAGroupHolds) {
  if (!suite()) GTEST_SKIP() << "needs the pg suite's cluster";
  auto pg = weft::placement_group({{{"CPU", 2}, {"rank2", 1}}}, Strategy::Pack, {.name = "hold-2"});
  ASSERT_TRUE(pg.wait(30s)) << pg.state().reason;
  ASSERT_EQ(pg.bundles()[0].rank, 2);
  auto from1 = weft::task(pg_fan_out).options({.num_cpus = 0, .resources = {{"rank1", 1}}}).remote(40);
  auto from3 = weft::task(pg_fan_out).options({.num_cpus = 0, .resources = {{"rank3", 1}}}).remote(40);
  std::set<int> used;
  for (auto* r : {&from1, &from3})
    for (int where : r->get(60s)) used.insert(where);
  EXPECT_EQ(used.count(2), 0u) << "a plain task ran on the rank whose CPUs the group holds";
  EXPECT_GE(used.size(), 2u);  // they did spread over the other ranks
  pg.remove();
}
