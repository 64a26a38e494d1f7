// Basic behaviour of the node store: zero-copy views, visibility across processes, removal,
// and the user-facing errors of create/attach.
#include "store/node_store.hpp"

#include <gtest/gtest.h>

#include "store/allocator.hpp"
#include "store_test_util.hpp"
#include "weft/errors.hpp"

namespace weft::store {
namespace {
using namespace testing;

TEST(NodeStore, GetIsZeroCopyInsideTheSegment) {
  TempStore t(16 << 20);
  auto s = NodeStore::create(t.opts);
  WritableObject w = s->create(oid(1), 1 << 20, true).take();
  std::byte* written = w.data().data();
  fill_pattern(w.data(), 1);
  w.seal();
  auto v = s->get(oid(1));
  ASSERT_TRUE(v);
  auto* base = static_cast<const std::byte*>(s->base());
  EXPECT_TRUE(v->in_segment());
  EXPECT_EQ(v->data(), written);  // the reader sees the writer's bytes, not a copy
  EXPECT_GE(v->data(), base);
  EXPECT_LE(v->data() + v->size(), base + s->segment_size());
  EXPECT_EQ(s->offset_of(*v), size_t(v->data() - base));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v->data()) % 64, kPayloadLead);  // allocator.hpp
  EXPECT_EQ(check_pattern(v->bytes(), 1), -1);
  auto v2 = s->get(oid(1));
  EXPECT_EQ(v2->data(), v->data());
  static_assert(std::is_same_v<decltype(v->data()), const std::byte*>);
  static_assert(std::is_same_v<decltype(v->bytes()), std::span<const std::byte>>);
}

TEST(NodeStore, ObjectsWrittenInOneProcessAreReadInAnother) {
  TempStore t(16 << 20);
  auto s = NodeStore::create(t.opts);
  put(*s, 1, 3 << 20);
  const size_t parent_offset = s->offset_of(*s->get(oid(1)));
  // A child attaches, checks the parent's object at the same segment offset, writes its own.
  int rc = run_in_child([&] {
    auto c = NodeStore::attach(attach_options(t.opts.name));
    auto v = c->get(oid(1));
    if (!v || check_pattern(v->bytes(), 1) != -1) return 1;
    if (c->offset_of(*v) != parent_offset) return 2;
    put(*c, 2, 1 << 20, false);
    return c->contains(oid(2)) ? 0 : 3;
  });
  ASSERT_EQ(rc, 0);
  auto v = s->get(oid(2));
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->primary());
  EXPECT_EQ(check_pattern(v->bytes(), 2), -1);
  EXPECT_EQ(s->stats().num_objects, 2u);
}

TEST(NodeStore, UnsealedObjectsAreInvisibleAndDiscardedIfAbandoned) {
  TempStore t(8 << 20);
  auto s = NodeStore::create(t.opts);
  {
    WritableObject w = s->create(oid(1), 4096, true).take();
    EXPECT_FALSE(s->contains(oid(1)));
    EXPECT_FALSE(s->get(oid(1)));
  }
  EXPECT_EQ(s->stats().num_objects, 0u);
  EXPECT_EQ(s->stats().used, 0u);
}

TEST(NodeStore, RemoveFreesMemorySpillAndFallbackBackToZero) {
  TempStore t(8 << 20);
  t.opts.spill_threshold = 0.5;
  t.opts.alloc_timeout = std::chrono::milliseconds(200);
  auto s = NodeStore::create(t.opts);
  for (uint64_t i = 0; i < 6; ++i) put(*s, i, 1 << 20, true);       // some will spill
  for (uint64_t i = 10; i < 12; ++i) put(*s, i, 512 << 10, false);  // secondaries
  put(*s, 20, 32 << 20, true);  // larger than the store: lives in a fallback file
  ASSERT_TRUE(eventually([&] { return s->stats().spilled_objects > 0; }));
  auto st = s->stats();
  EXPECT_EQ(st.fallback_objects, 1u);
  EXPECT_GT(t.files_in_spill_dir(), 1u);
  for (uint64_t i : {0, 1, 2, 3, 4, 5, 10, 11, 20}) s->remove(oid(i));
  // An object the spill thread is writing when it is removed goes when that write ends (the
  // thread holds it until then), so the counts reach zero then, not at once.
  ASSERT_TRUE(eventually([&] { return s->stats().num_objects == 0; }))
      << s->stats().num_objects << " object(s) left";
  st = s->stats();
  EXPECT_EQ(st.used, 0u);
  EXPECT_EQ(st.primary_bytes, 0u);
  EXPECT_EQ(st.secondary_bytes, 0u);
  EXPECT_EQ(st.spilled_bytes, 0u);
  EXPECT_EQ(st.spilled_objects, 0u);
  EXPECT_EQ(st.fallback_bytes, 0u);
  EXPECT_EQ(st.num_objects, 0u);
  EXPECT_EQ(t.files_in_spill_dir(), 0u);
}

TEST(NodeStore, RemoveWhileViewedKeepsBytesUntilTheViewCloses) {
  TempStore t(8 << 20);
  auto s = NodeStore::create(t.opts);
  put(*s, 1, 1 << 20);
  {
    auto v = s->get(oid(1));
    s->remove(oid(1));
    EXPECT_FALSE(s->contains(oid(1)));
    EXPECT_GT(s->stats().used, 0u);
    EXPECT_EQ(check_pattern(v->bytes(), 1), -1);
  }
  EXPECT_EQ(s->stats().used, 0u);
  EXPECT_EQ(s->stats().num_objects, 0u);
}

TEST(NodeStore, TakingAnExistingObjectAsNewIsATypedErrorNamingIt) {
  TempStore t(8 << 20);
  auto s = NodeStore::create(t.opts);
  put(*s, 1, 100);
  CreateResult r = s->create(oid(1), 100, true);
  EXPECT_EQ(r.status(), CreateStatus::kExists);
  try {
    std::move(r).take();
    FAIL() << "take() of an existing id succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(oid(1).str()), std::string::npos) << e.what();
  }
}

TEST(NodeStore, AttachWithoutCreateNamesTheSegment) {
  StoreOptions o = attach_options("weft_store_test_absent_" + unique_suffix());
  try {
    NodeStore::attach(o);
    FAIL() << "attach succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(o.name), std::string::npos) << e.what();
  }
}

TEST(NodeStore, TwoStoresCannotShareAName) {
  TempStore t(1 << 20);
  auto s = NodeStore::create(t.opts);
  EXPECT_THROW(NodeStore::create(t.opts), Error);
}

TEST(NodeStore, BadOptionsAreTypedErrors) {
  TempStore t(1 << 20);
  t.opts.capacity = 10;
  EXPECT_THROW(NodeStore::create(t.opts), Error);
  t.opts.capacity = 1 << 20;
  t.opts.spill_threshold = 1.5;
  EXPECT_THROW(NodeStore::create(t.opts), Error);
  t.opts.spill_threshold = 0.8;
  t.opts.spill_dir = "/proc/weft-cannot-create-here";
  EXPECT_THROW(NodeStore::create(t.opts), Error);
}

TEST(NodeStore, FullObjectTableIsObjectStoreFullError) {
  TempStore t(1 << 20);
  t.opts.max_objects = 4;
  auto s = NodeStore::create(t.opts);
  for (uint64_t i = 0; i < 4; ++i) put(*s, i, 64);
  EXPECT_THROW(s->create(oid(9), 64, true), ObjectStoreFullError);
  s->remove(oid(0));
  EXPECT_NO_THROW(put(*s, 9, 64));
}

TEST(NodeStore, ZeroByteObjects) {
  TempStore t(1 << 20);
  auto s = NodeStore::create(t.opts);
  put(*s, 1, 0);
  auto v = s->get(oid(1));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->size(), 0u);
}

}  // namespace
}  // namespace weft::store
