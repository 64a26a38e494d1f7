// A rank that dies holding the store lock must not wedge its node: the next locker repairs the
// metadata and carries on, and what the dead rank was writing is discarded.
#include <gtest/gtest.h>
#include <pthread.h>

#include "store/mapping.hpp"
#include "store/node_store.hpp"
#include "store/segment_layout.hpp"
#include "store_test_util.hpp"

namespace weft::store {
namespace {
using namespace testing;

TEST(StoreLockRecovery, ProcessDyingWithTheLockDoesNotWedgeOthers) {
  TempStore t(8 << 20);
  auto s = NodeStore::create(t.opts);
  put(*s, 1, 1 << 20);
  const size_t used_before = s->stats().used;
  const int rc = run_in_child([&] {
    auto c = NodeStore::attach(attach_options(t.opts.name));
    WritableObject w = c->create(oid(2), 2 << 20, true).take();  // never sealed
    Mapping seg = shm_attach(t.opts.name);
    auto* h = static_cast<SegmentHeader*>(seg.addr());
    if (pthread_mutex_lock(&h->sync.mutex) != 0) return 1;
    ::_exit(0);  // dies holding the lock, mid-write
  });
  ASSERT_EQ(rc, 0);
  // Would block forever without robust-mutex handling; the test's timeout guards it.
  put(*s, 3, 1 << 20);
  auto st = s->stats();
  EXPECT_EQ(st.lock_recoveries, 1u);
  EXPECT_FALSE(s->contains(oid(2)));
  EXPECT_EQ(st.num_objects, 2u);
  EXPECT_EQ(st.used, 2 * used_before);  // the dead writer's block was freed
  EXPECT_EQ(check_pattern(s->get(oid(1))->bytes(), 1), -1);
  EXPECT_EQ(check_pattern(s->get(oid(3))->bytes(), 3), -1);
}

TEST(StoreLockRecovery, WriterKilledMidObjectLeavesNoLeakOnceDetected) {
  TempStore t(8 << 20);
  t.opts.spill_thread = false;
  auto s = NodeStore::create(t.opts);
  const int rc = run_in_child([&] {
    auto c = NodeStore::attach(attach_options(t.opts.name));
    WritableObject w = c->create(oid(5), 1 << 20, true).take();
    Mapping seg = shm_attach(t.opts.name);
    auto* h = static_cast<SegmentHeader*>(seg.addr());
    pthread_mutex_lock(&h->sync.mutex);
    ::kill(::getpid(), SIGKILL);
    return 1;
  });
  ASSERT_EQ(rc, 128 + SIGKILL);
  EXPECT_FALSE(s->contains(oid(5)));
  auto st = s->stats();
  EXPECT_EQ(st.lock_recoveries, 1u);
  EXPECT_EQ(st.used, 0u);
  EXPECT_EQ(st.primary_bytes, 0u);
  EXPECT_EQ(st.num_objects, 0u);
}

}  // namespace
}  // namespace weft::store
