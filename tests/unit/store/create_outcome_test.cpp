// What NodeStore::create() reports: a new object, an id the node already holds (sealed, or being
// written by this or another process of the node), and the real failures, which stay typed
// errors and never pass for "already exists" (the pull path waits only on the latter).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>
#include <string>

#include "store/node_store.hpp"
#include "store_test_util.hpp"
#include "weft/errors.hpp"

namespace weft::store {
namespace {
using namespace testing;
constexpr size_t kMiB = 1 << 20;

bool mentions(const std::exception& e, const std::string& what) {
  return std::string(e.what()).find(what) != std::string::npos;
}

TEST(NodeStoreCreate, ANewIdIsCreated) {
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  EXPECT_EQ(s->presence(oid(1)), Presence::kAbsent);
  CreateResult r = s->create(oid(1), 4096, true);
  ASSERT_EQ(r.status(), CreateStatus::kCreated);
  EXPECT_TRUE(r.created());
  EXPECT_EQ(r.id(), oid(1));
  EXPECT_EQ(r.object().size(), 4096u);
  fill_pattern(r.object().data(), 1);
  r.object().seal();
  ASSERT_TRUE(s->get(oid(1)));
  EXPECT_EQ(check_pattern(s->get(oid(1))->bytes(), 1), -1);
}

TEST(NodeStoreCreate, ASealedIdReportsExistsAndAllocatesNothing) {
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  put(*s, 1, kMiB, true);
  const StoreStats before = s->stats();
  CreateResult r = s->create(oid(1), kMiB, /*primary=*/false);
  EXPECT_EQ(r.status(), CreateStatus::kExists);
  EXPECT_FALSE(r.created());
  EXPECT_EQ(s->presence(oid(1)), Presence::kSealed);
  const StoreStats after = s->stats();
  EXPECT_EQ(after.used, before.used);
  EXPECT_EQ(after.num_objects, 1u);
  auto v = s->get(oid(1));  // the first copy is untouched
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->primary());
  EXPECT_EQ(check_pattern(v->bytes(), 1), -1);
}

TEST(NodeStoreCreate, AnIdBeingWrittenReportsInProgressUntilSealed) {
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  WritableObject w = s->create(oid(1), kMiB, false).take();
  EXPECT_EQ(s->create(oid(1), kMiB, false).status(), CreateStatus::kInProgress);
  EXPECT_EQ(s->presence(oid(1)), Presence::kWriting);
  fill_pattern(w.data(), 1);
  w.seal();
  EXPECT_EQ(s->create(oid(1), kMiB, false).status(), CreateStatus::kExists);
  EXPECT_EQ(s->presence(oid(1)), Presence::kSealed);
  EXPECT_EQ(s->stats().num_objects, 1u);
}

TEST(NodeStoreCreate, AnotherProcessOfTheNodeSeesTheSameOutcomes) {
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  WritableObject w = s->create(oid(1), kMiB, false).take();
  // A second rank of the node races for the same copy while this one writes it, and makes one
  // of its own.
  int rc = run_in_child([&] {
    auto c = NodeStore::attach(attach_options(t.opts.name));
    if (c->create(oid(1), kMiB, false).status() != CreateStatus::kInProgress) return 1;
    if (c->presence(oid(1)) != Presence::kWriting) return 2;
    CreateResult mine = c->create(oid(2), kMiB, false);
    if (!mine.created()) return 3;
    fill_pattern(mine.object().data(), 2);
    mine.object().seal();
    return 0;
  });
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(s->create(oid(2), kMiB, false).status(), CreateStatus::kExists);
  fill_pattern(w.data(), 1);
  w.seal();
  rc = run_in_child([&] {
    auto c = NodeStore::attach(attach_options(t.opts.name));
    return c->create(oid(1), kMiB, false).status() == CreateStatus::kExists ? 0 : 1;
  });
  EXPECT_EQ(rc, 0);
}

TEST(NodeStoreCreate, AnAbortedWriteFreesTheId) {
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  { WritableObject w = s->create(oid(1), kMiB, false).take(); }  // dropped unsealed
  EXPECT_EQ(s->presence(oid(1)), Presence::kAbsent);
  EXPECT_EQ(s->create(oid(1), kMiB, false).status(), CreateStatus::kCreated);
}

TEST(NodeStoreCreate, AFullStoreIsObjectStoreFullErrorNotExists) {
  TempStore t(4 * kMiB);
  t.opts.spill_thread = false;
  t.opts.spill_limit = kMiB;
  t.opts.alloc_timeout = std::chrono::milliseconds(50);
  auto s = NodeStore::create(t.opts);
  put(*s, 1, 3 * kMiB, true);
  try {
    s->create(oid(2), 3 * kMiB, false);
    FAIL() << "create() in a full store did not throw";
  } catch (const ObjectStoreFullError& e) {
    EXPECT_TRUE(mentions(e, oid(2).str())) << e.what();
  }
  EXPECT_EQ(s->presence(oid(2)), Presence::kAbsent);  // nothing left behind to wait for
  s->remove(oid(1));
  EXPECT_EQ(s->create(oid(2), 3 * kMiB, false).status(), CreateStatus::kCreated);
}

TEST(NodeStoreCreate, AFallbackFileThatCannotBeMadeIsAnErrorNotExists) {
  TempStore t(kMiB);
  auto s = NodeStore::create(t.opts);
  std::filesystem::remove_all(t.opts.spill_dir);  // larger than the store: fallback, nowhere
  try {
    s->create(oid(1), 2 * kMiB, false);
    FAIL() << "create() without a spill directory did not throw";
  } catch (const ObjectStoreFullError& e) {
    FAIL() << "a mapping failure passed for a full store: " << e.what();
  } catch (const Error& e) {
    EXPECT_TRUE(mentions(e, "fallback file")) << e.what();
  }
  EXPECT_EQ(s->presence(oid(1)), Presence::kAbsent);
  EXPECT_EQ(s->stats().fallback_bytes, 0u);
  std::filesystem::create_directories(t.opts.spill_dir);
  CreateResult r = s->create(oid(1), 2 * kMiB, false);
  ASSERT_TRUE(r.created());
  EXPECT_FALSE(r.object().in_segment());
}

TEST(NodeStoreCreate, AnIdBeingRemovedIsAnErrorNamingIt) {
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  put(*s, 1, kMiB, false);
  auto v = s->get(oid(1));
  s->remove(oid(1));  // the view keeps it until it closes
  EXPECT_EQ(s->presence(oid(1)), Presence::kRemoving);
  try {
    s->create(oid(1), kMiB, false);
    FAIL() << "create() of an id being removed did not throw";
  } catch (const Error& e) {
    EXPECT_TRUE(mentions(e, oid(1).str())) << e.what();
    EXPECT_TRUE(mentions(e, "being removed")) << e.what();
  }
  v.reset();
  EXPECT_EQ(s->create(oid(1), kMiB, false).status(), CreateStatus::kCreated);
}

TEST(NodeStoreCreate, AnIdWhoseWriterDiedIsReclaimedAndMadeAgain) {
  // A rank killed while writing a result or a pulled copy leaves its entry unsealed; the task's
  // retry on another rank of the node (same result id) or the next pull must be able to make it.
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  const int rc = run_in_child([&] {
    auto c = NodeStore::attach(attach_options(t.opts.name));
    WritableObject w = c->create(oid(3), kMiB, false).take();
    ::_exit(0);  // dies mid-write, not holding the lock: nothing repairs it
    return 1;
  });
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(s->presence(oid(3)), Presence::kAbandoned);
  const size_t used_abandoned = s->stats().used;
  EXPECT_GE(used_abandoned, kMiB);
  CreateResult r = s->create(oid(3), kMiB, false);
  ASSERT_EQ(r.status(), CreateStatus::kCreated);
  EXPECT_EQ(s->stats().used, used_abandoned) << "the dead writer's block was not reused";
  EXPECT_EQ(s->stats().num_objects, 1u);
  fill_pattern(r.object().data(), 3);
  r.object().seal();
  ASSERT_TRUE(s->get(oid(3)));
  EXPECT_EQ(check_pattern(s->get(oid(3))->bytes(), 3), -1);
}

TEST(NodeStoreCreate, TakeOfAnIdInProgressIsATypedError) {
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  WritableObject w = s->create(oid(1), 64, true).take();
  EXPECT_THROW(s->create(oid(1), 64, true).take(), Error);
}

// try_create is create() for an event loop: it never waits. With no room while spilling can
// make some, it says kNoRoomYet and leaves nothing behind, and the spiller is asked for room;
// asked again, it creates in memory once the spill freed room; from its deadline on (or when
// spilling cannot help) it gives a fallback file, as create() does after its wait.
TEST(NodeStoreCreate, TryCreateNeverWaitsAndIsAFallbackFileFromItsDeadline) {
  TempStore t(4 * kMiB);
  t.opts.alloc_timeout = std::chrono::milliseconds(60000);  // create() would wait a minute
  auto s = NodeStore::create(t.opts);
  put(*s, 1, 3 * kMiB, true);  // unpinned primary below the spill threshold: spillable
  const int64_t deadline = monotonic_ns() + int64_t(30) * 1000000000;
  CreateResult first = s->try_create(oid(2), 3 * kMiB, false, deadline);
  ASSERT_EQ(first.status(), CreateStatus::kNoRoomYet) << to_string(first.status());
  EXPECT_FALSE(first.created());
  EXPECT_EQ(s->presence(oid(2)), Presence::kAbsent) << "a refused try leaves nothing behind";
  // The spiller was asked for room: a later try finds it in memory.
  std::optional<CreateResult> made;
  for (int i = 0; i < 30000 && !made; ++i) {
    CreateResult r = s->try_create(oid(2), 3 * kMiB, false, deadline);
    if (r.status() == CreateStatus::kNoRoomYet) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    made.emplace(std::move(r));
  }
  ASSERT_TRUE(made && made->created()) << "no room was ever made";
  EXPECT_TRUE(made->object().in_segment());
  EXPECT_EQ(s->presence(oid(1)), Presence::kSealed);  // spilled, not lost
  EXPECT_GT(s->stats().spilled_bytes, 0u);
  // The store is full of an unsealed object now (spilling cannot help): a fallback file at once,
  // whatever the deadline.
  CreateResult fb = s->try_create(oid(3), 2 * kMiB, false, deadline);
  ASSERT_TRUE(fb.created()) << to_string(fb.status());
  EXPECT_FALSE(fb.object().in_segment());
  // A deadline already past: even where spilling could make room, a fallback file at once.
  TempStore t2(4 * kMiB);
  t2.opts.alloc_timeout = std::chrono::milliseconds(60000);
  auto s2 = NodeStore::create(t2.opts);
  put(*s2, 1, 3 * kMiB, true);
  CreateResult late = s2->try_create(oid(2), 3 * kMiB, false, monotonic_ns());
  ASSERT_TRUE(late.created()) << to_string(late.status());
  EXPECT_FALSE(late.object().in_segment());
}

}  // namespace
}  // namespace weft::store
