// NodeStore::put_result: how a task's result goes into its node's store. A result's id is its
// task's, so a task run again after its rank (or the holder of its value) died stores under the
// same id, and on the same node its earlier attempt may have left that object behind: sealed (it
// is kept, as the result), still being written by a process that is going away (it is waited
// for), or abandoned by a writer that died (it is made anew).
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "store/node_store.hpp"
#include "store_test_util.hpp"
#include "weft/errors.hpp"

namespace weft::store {
namespace {
using namespace testing;
using namespace std::chrono_literals;
constexpr size_t kMiB = 1 << 20;

std::vector<std::byte> pattern(size_t size, uint64_t seq) {
  std::vector<std::byte> v(size);
  fill_pattern(v, seq);
  return v;
}

TEST(NodeStorePutResult, ANewIdIsWrittenAndSealedAsAPrimary) {
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  EXPECT_EQ(s->put_result(oid(1), pattern(kMiB, 1)), kMiB);
  auto v = s->get(oid(1));
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->primary());
  EXPECT_EQ(check_pattern(v->bytes(), 1), -1);
  EXPECT_EQ(s->stats().primary_bytes, kMiB);
}

TEST(NodeStorePutResult, ASealedCopyFromAnEarlierAttemptIsKept) {
  // The first attempt (another process of the node, since dead) sealed 2 MiB; the re-run made a
  // different value of another size. The node keeps the first: a reader may already map it.
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  ASSERT_EQ(run_in_child([&] {
              auto c = NodeStore::attach(attach_options(t.opts.name));
              return c->put_result(oid(1), pattern(2 * kMiB, 1)) == 2 * kMiB ? 0 : 1;
            }),
            0);
  const StoreStats before = s->stats();
  EXPECT_EQ(s->put_result(oid(1), pattern(kMiB, 7)), 2 * kMiB);
  EXPECT_EQ(s->stats().used, before.used) << "the re-run allocated a second copy";
  EXPECT_EQ(s->stats().num_objects, 1u);
  EXPECT_EQ(check_pattern(s->get(oid(1))->bytes(), 1), -1);
}

TEST(NodeStorePutResult, AKeptSecondaryBecomesAPrimaryThatIsNeverEvicted) {
  // A copy pulled to this node before its producer, elsewhere, died; the task re-runs here.
  TempStore t(4 * kMiB);
  t.opts.spill_thread = false;
  t.opts.spill_threshold = 1.0;
  t.opts.alloc_timeout = 100ms;
  auto s = NodeStore::create(t.opts);
  put(*s, 2, 2 * kMiB, /*primary=*/false);
  EXPECT_EQ(s->stats().secondary_bytes, 2 * kMiB);
  EXPECT_EQ(s->put_result(oid(2), pattern(2 * kMiB, 9)), 2 * kMiB);
  EXPECT_TRUE(s->info(oid(2)).primary);
  EXPECT_EQ(s->stats().secondary_bytes, 0u);
  EXPECT_EQ(s->stats().primary_bytes, 2 * kMiB);
  // Room for more than is free no longer evicts it: the new object takes a fallback file.
  put(*s, 3, 3 * kMiB, /*primary=*/false);
  EXPECT_TRUE(s->contains(oid(2)));
  EXPECT_EQ(s->stats().evictions, 0u);
  EXPECT_EQ(s->stats().fallback_objects, 1u);
  EXPECT_EQ(check_pattern(s->get(oid(2))->bytes(), 2), -1);
  s->remove(oid(2));
  EXPECT_EQ(s->stats().primary_bytes, 0u);
}

TEST(NodeStorePutResult, ACopyBeingWrittenIsWaitedForAndKept) {
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  WritableObject w = s->create(oid(1), kMiB, true).take();
  std::thread writer([&] {
    std::this_thread::sleep_for(100ms);
    fill_pattern(w.data(), 1);
    w.seal();
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(s->put_result(oid(1), pattern(kMiB, 5)), kMiB);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 90ms);
  writer.join();
  EXPECT_EQ(check_pattern(s->get(oid(1))->bytes(), 1), -1);
}

TEST(NodeStorePutResult, AWriterThatNeverSealsIsAnErrorAfterAllocTimeout) {
  TempStore t(8 * kMiB);
  t.opts.alloc_timeout = 150ms;
  auto s = NodeStore::create(t.opts);
  WritableObject w = s->create(oid(4), kMiB, true).take();
  try {
    s->put_result(oid(4), pattern(kMiB, 4));
    FAIL() << "put_result returned while another writer held the id";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(oid(4).str()), std::string::npos) << what;
    EXPECT_NE(what.find("150 ms (alloc_timeout)"), std::string::npos) << what;
  }
}

TEST(NodeStorePutResult, ACopyAbandonedByADeadWriterIsMadeAnew) {
  TempStore t(8 * kMiB);
  auto s = NodeStore::create(t.opts);
  ASSERT_EQ(run_in_child([&] {
              auto c = NodeStore::attach(attach_options(t.opts.name));
              WritableObject w = c->create(oid(3), kMiB, true).take();
              ::_exit(0);  // killed mid-write
              return 1;
            }),
            0);
  EXPECT_EQ(s->presence(oid(3)), Presence::kAbandoned);
  EXPECT_EQ(s->put_result(oid(3), pattern(kMiB, 3)), kMiB);
  EXPECT_EQ(check_pattern(s->get(oid(3))->bytes(), 3), -1);
  EXPECT_EQ(s->stats().num_objects, 1u);
}

}  // namespace
}  // namespace weft::store
