// ExecGate, the executor's resource gate, driven without a runtime: admission order, resources
// taken and given back, GPUs, bundles of placement groups, lent CPU slots, and what work
// stealing may take.
#include "core/exec_gate.hpp"

#include <gtest/gtest.h>

namespace weft::core {
namespace {

ExecItemPtr task(uint64_t seq, double cpus, uint32_t depth = 0, double gpus = 0) {
  auto it = std::make_unique<ExecItem>();
  it->ret = ObjectId{0, 0, seq};
  it->need = sched::ResourceSet{{"CPU", cpus}};
  if (gpus > 0) it->need += sched::ResourceSet{{"GPU", gpus}};
  it->depth = depth;
  return it;
}

std::vector<uint64_t> seqs(const std::vector<ExecItemPtr>& items) {
  std::vector<uint64_t> out;
  for (const auto& i : items) out.push_back(i->ret.seq);
  return out;
}

// Everything that may start now, as the loop takes it (executor.cpp).
struct Ready {
  std::vector<ExecItemPtr> run, rejected;
  bool empty() const { return run.empty() && rejected.empty(); }
};
Ready take_ready(ExecGate& g) {
  Ready r;
  ExecItemPtr item;
  bool rejected = false;
  while (g.take_next(&item, &rejected)) (rejected ? r.rejected : r.run).push_back(std::move(item));
  return r;
}

TEST(ExecGate, AdmitsWhatFitsInArrivalOrderAndTheRestWhenReleased) {
  ExecGate g(0, sched::ResourceSet{{"CPU", 2}}, {});
  for (uint64_t s = 1; s <= 4; ++s) g.push(task(s, 1));
  auto r = take_ready(g);
  EXPECT_EQ(seqs(r.run), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(g.queued(), 2u);
  EXPECT_TRUE(take_ready(g).empty());  // nothing fits until something ends
  g.release(*r.run[0]);
  EXPECT_EQ(seqs(take_ready(g).run), (std::vector<uint64_t>{3}));
  EXPECT_EQ(g.free_cpu_units(), 0);
}

TEST(ExecGate, DeeperWorkFirstAndABlockedLevelDoesNotBlockShallowerOnes) {
  ExecGate g(0, sched::ResourceSet{{"CPU", 2}}, {});
  g.push(task(1, 1, /*depth=*/0));
  g.push(task(2, 1, /*depth=*/2));
  g.push(task(3, 1, /*depth=*/1));
  EXPECT_EQ(seqs(take_ready(g).run), (std::vector<uint64_t>{2, 3}));  // deepest first
  ExecGate h(0, sched::ResourceSet{{"CPU", 2}}, {});
  h.push(task(4, 3, /*depth=*/1));  // can never fit here: waits, but only at its own level
  h.push(task(5, 1, /*depth=*/0));
  EXPECT_EQ(seqs(take_ready(h).run), (std::vector<uint64_t>{5}));
}

TEST(ExecGate, AnEmptiedLevelCountsAsNothingQueued) {
  // Emptied levels stay in the gate (no allocation per task for them); they are not work.
  ExecGate g(0, sched::ResourceSet{{"CPU", 2}}, {});
  g.push(task(1, 1, /*depth=*/0));
  g.push(task(2, 1, /*depth=*/3));
  EXPECT_FALSE(g.idle());
  auto r = take_ready(g);
  EXPECT_EQ(seqs(r.run), (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(g.queued(), 0u);
  for (const auto& i : r.run) g.release(*i);
  EXPECT_TRUE(g.idle());
  size_t seen = 0;
  g.for_each_queued([&](const ExecItem&) { ++seen; });
  EXPECT_EQ(seen, 0u);
  g.push(task(3, 1, /*depth=*/3));  // the kept level takes work again
  EXPECT_EQ(g.queued(), 1u);
  EXPECT_EQ(seqs(take_ready(g).run), (std::vector<uint64_t>{3}));
}

TEST(ExecGate, ATaskBlockedInGetLendsItsSlot) {
  ExecGate g(0, sched::ResourceSet{{"CPU", 1}}, {});
  g.push(task(1, 1));
  g.push(task(2, 1));
  EXPECT_EQ(take_ready(g).run.size(), 1u);
  g.lend_cpu(1);  // task 1 waits in get()
  EXPECT_EQ(seqs(take_ready(g).run), (std::vector<uint64_t>{2}));
  g.reclaim_cpu(1);  // and resumes: over-committed until one ends
  EXPECT_EQ(g.free_cpu_units(), -sched::ResourceSet::kUnit);
}

TEST(ExecGate, GpusComeFromDevicesAndAreNamed) {
  ExecGate g(0, sched::ResourceSet{{"CPU", 4}, {"GPU", 2}}, {0, 1});
  g.push(task(1, 1, 0, /*gpus=*/1));
  g.push(task(2, 1, 0, 1));
  g.push(task(3, 1, 0, 1));
  auto r = take_ready(g);
  ASSERT_EQ(r.run.size(), 2u);
  EXPECT_EQ(r.run[0]->rare->placement.gpus, std::vector<int>{0});
  EXPECT_EQ(r.run[1]->rare->placement.gpus, std::vector<int>{1});
  g.release(*r.run[1]);
  auto again = take_ready(g);
  ASSERT_EQ(again.run.size(), 1u);
  EXPECT_EQ(again.run[0]->rare->placement.gpus, std::vector<int>{1});  // the device given back
}

TEST(ExecGate, BundlesReserveAndTheirWorkDrawsFromThem) {
  ExecGate g(3, sched::ResourceSet{{"CPU", 2}}, {});
  auto p = g.prepare(/*pg=*/7, /*bundle=*/0, sched::ResourceSet{{"CPU", 1}});
  ASSERT_TRUE(p.ok) << p.why;
  ExecItemPtr in = task(1, 1);
  in->rare.mut().placement.pg = 7;
  g.push(std::move(in));
  EXPECT_TRUE(take_ready(g).empty());  // prepared, not committed yet: waits
  g.commit(7);
  auto r = take_ready(g);
  ASSERT_EQ(r.run.size(), 1u);
  EXPECT_EQ(r.run[0]->rare->placement.bundle, 0);
  // Plain work may use only what the bundle did not reserve.
  g.push(task(2, 1));
  g.push(task(3, 1));
  EXPECT_EQ(seqs(take_ready(g).run), (std::vector<uint64_t>{2}));
}

TEST(ExecGate, ABusyRankRefusesAPrepareAndSaysSoWhenRoomIsFreed) {
  ExecGate g(3, sched::ResourceSet{{"CPU", 1}}, {});
  g.push(task(1, 1));
  auto r = take_ready(g);
  auto p = g.prepare(7, 0, sched::ResourceSet{{"CPU", 1}});
  EXPECT_FALSE(p.ok);
  EXPECT_NE(p.why.find("rank 3 is busy"), std::string::npos) << p.why;
  EXPECT_TRUE(g.release(*r.run[0]));  // the head waits for this
  g.push(task(2, 1));
  EXPECT_FALSE(g.release(*take_ready(g).run.at(0)));  // told once
}

TEST(ExecGate, WorkOfARemovedGroupIsRejectedAndRollbackGivesTheRoomBack) {
  ExecGate g(0, sched::ResourceSet{{"CPU", 2}}, {});
  ASSERT_TRUE(g.prepare(7, 0, sched::ResourceSet{{"CPU", 2}}).ok);
  g.rollback(7);
  EXPECT_EQ(g.free_cpu_units(), 2 * sched::ResourceSet::kUnit);
  ASSERT_TRUE(g.prepare(8, 0, sched::ResourceSet{{"CPU", 1}}).ok);
  g.commit(8);
  g.remove(8);
  ExecItemPtr in = task(1, 1);
  in->rare.mut().placement.pg = 8;
  g.push(std::move(in));
  auto r = take_ready(g);
  EXPECT_TRUE(r.run.empty());
  EXPECT_EQ(seqs(r.rejected), (std::vector<uint64_t>{1}));
  EXPECT_EQ(g.free_cpu_units(), 2 * sched::ResourceSet::kUnit);
}

TEST(ExecGate, StealingTakesTheYoungestShallowTasksThatFitTheThief) {
  ExecGate g(0, sched::ResourceSet{{"CPU", 1}}, {});
  g.push(task(1, 1));  // runs
  EXPECT_EQ(take_ready(g).run.size(), 1u);
  g.push(task(2, 1, /*depth=*/1));
  g.push(task(3, 1));
  g.push(task(4, 1));
  g.push(task(5, 2));
  ExecItemPtr creation = task(6, 1);
  creation->kind = ExecItem::Kind::kActorCreate;
  g.push(std::move(creation));
  EXPECT_EQ(g.stealable_queued(), 4u);
  // The thief has 2 CPUs free, and refuses task 4 (say, a hard affinity elsewhere).
  auto given = g.give_away(2 * sched::ResourceSet::kUnit, 8,
                           [](const ExecItem& i) { return i.ret.seq != 4; });
  // Depth 0 first, youngest first: 5 needs 2 CPUs and takes both; 4 refused; nothing else fits.
  EXPECT_EQ(seqs(given), (std::vector<uint64_t>{5}));
  given = g.give_away(2 * sched::ResourceSet::kUnit, 1, [](const ExecItem&) { return true; });
  EXPECT_EQ(seqs(given), (std::vector<uint64_t>{4}));  // the limit
  EXPECT_EQ(g.stealable_queued(), 2u);                 // 2 and 3; the creation never counts
  EXPECT_FALSE(g.idle());
}

}  // namespace
}  // namespace weft::core
