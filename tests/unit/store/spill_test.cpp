// Spilling to HDF5 and restoring: volume through the store far beyond its capacity with every
// byte checked; corrupted and missing spill files; the disk limits (spill_limit, a full file
// system, a file size limit) ending in ObjectStoreFullError rather than endless retries.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>

#include "store/node_store.hpp"
#include "store/spill_file.hpp"
#include "store_test_util.hpp"
#include "weft/errors.hpp"

namespace weft::store {
namespace {
using namespace testing;
constexpr size_t kMiB = 1 << 20;

TEST(StoreSpill, TenTimesCapacityRoundTripsByteForByte) {
  TempStore t(16 * kMiB);
  auto s = NodeStore::create(t.opts);
  const size_t n = 160, size = kMiB + 4096;  // ~10x capacity
  for (uint64_t i = 0; i < n; ++i) put(*s, i, size - (i % 7) * 8);
  auto st = s->stats();
  EXPECT_GT(st.spilled_objects, n / 2);
  EXPECT_LE(st.used, st.capacity);
  for (uint64_t i = 0; i < n; ++i) {
    auto v = s->get(oid(i));
    ASSERT_TRUE(v) << i;
    ASSERT_EQ(v->size(), size - (i % 7) * 8);
    ASSERT_EQ(check_pattern(v->bytes(), i), -1) << "object " << i;
  }
  EXPECT_GT(s->stats().restores, 0u);
  EXPECT_EQ(s->stats().fallback_objects, 0u);
  EXPECT_TRUE(s->last_spill_error().empty()) << s->last_spill_error();
}

TEST(StoreSpill, SpilledObjectsAreRestoredInAnotherProcess) {
  TempStore t(4 * kMiB);
  t.opts.spill_threshold = 0.3;
  auto s = NodeStore::create(t.opts);
  put(*s, 1, 2 * kMiB);
  ASSERT_TRUE(eventually([&] { return s->stats().primary_bytes == 0; }));
  ASSERT_EQ(run_in_child([&] {
              auto c = NodeStore::attach(attach_options(t.opts.name));
              auto v = c->get(oid(1));
              return v && v->in_segment() && check_pattern(v->bytes(), 1) == -1 ? 0 : 1;
            }),
            0);
  EXPECT_EQ(s->stats().restores, 1u);
}

// Spills object 1 and waits until it has left memory; returns its spill file.
std::string spill_one(NodeStore& s, const TempStore& t) {
  put(s, 1, 2 * kMiB);
  EXPECT_TRUE(eventually([&] { return s.stats().primary_bytes == 0; }));
  return spill_path(t.opts.spill_dir, oid(1));
}

TEST(StoreSpill, CorruptedSpillFileIsASpillErrorNamingPathAndObject) {
  TempStore t(4 * kMiB);
  t.opts.spill_threshold = 0.3;
  auto s = NodeStore::create(t.opts);
  const std::string path = spill_one(*s, t);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::filesystem::file_size(path) / 2);
    const char junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    f.write(junk, sizeof(junk));
  }
  try {
    s->get(oid(1));
    FAIL() << "restore of a corrupted file succeeded";
  } catch (const SpillError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(oid(1).str()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(2 * kMiB) + " bytes"), std::string::npos)
        << e.what();
  }
  // The failed restore gave its memory back.
  EXPECT_EQ(s->stats().primary_bytes, 0u);
  EXPECT_EQ(s->stats().used, 0u);
}

TEST(StoreSpill, TruncatedOrForeignSpillFilesAreSpillErrors) {
  TempStore t(4 * kMiB);
  t.opts.spill_threshold = 0.3;
  auto s = NodeStore::create(t.opts);
  const std::string path = spill_one(*s, t);
  std::filesystem::resize_file(path, 1000);
  EXPECT_THROW(s->get(oid(1)), SpillError);
  // A valid file of another object under this object's name.
  const std::vector<std::byte> other(2 * kMiB);
  bool full = false;
  write_spill_file(path, oid(7), other, &full);
  try {
    s->get(oid(1));
    FAIL();
  } catch (const SpillError& e) {
    EXPECT_NE(std::string(e.what()).find(oid(7).str()), std::string::npos) << e.what();
  }
}

TEST(StoreSpill, MissingSpillFileIsASpillError) {
  TempStore t(4 * kMiB);
  t.opts.spill_threshold = 0.3;
  auto s = NodeStore::create(t.opts);
  const std::string path = spill_one(*s, t);
  std::filesystem::remove(path);
  try {
    s->get(oid(1));
    FAIL();
  } catch (const SpillError& e) {
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// Puts 1 MiB primaries until the store refuses; returns the error's message.
std::string fill_until_full(NodeStore& s, size_t size, size_t max_objects) {
  for (uint64_t i = 0; i < max_objects; ++i) {
    try {
      put(s, 100 + i, size);
    } catch (const ObjectStoreFullError& e) {
      return e.what();
    }
  }
  return "";
}

TEST(StoreDiskLimits, SpillLimitEndsInObjectStoreFullError) {
  TempStore t(4 * kMiB);
  t.opts.spill_threshold = 0.5;
  t.opts.spill_limit = 4 * kMiB;
  t.opts.alloc_timeout = std::chrono::milliseconds(500);
  auto s = NodeStore::create(t.opts);
  const std::string msg = fill_until_full(*s, kMiB, 32);
  ASSERT_FALSE(msg.empty()) << "the store never refused";
  EXPECT_NE(msg.find("spill_limit"), std::string::npos) << msg;
  EXPECT_NE(msg.find(t.opts.spill_dir), std::string::npos) << msg;
  EXPECT_NE(msg.find("(" + std::to_string(kMiB) + " bytes)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("spill_limit " + std::to_string(4 * kMiB)), std::string::npos) << msg;
  auto st = s->stats();
  EXPECT_LE(st.spilled_bytes + st.fallback_bytes, t.opts.spill_limit);
  EXPECT_NE(s->last_spill_error().find("spill_limit"), std::string::npos);
  // Removing objects frees disk and memory: every remaining object then reads back intact.
  const uint64_t accepted = st.num_objects;
  for (uint64_t i = 100; i < 100 + accepted / 2; ++i) s->remove(oid(i));
  for (uint64_t i = 100 + accepted / 2; i < 100 + accepted; ++i) {
    auto v = s->get(oid(i));
    ASSERT_TRUE(v) << i;
    EXPECT_EQ(check_pattern(v->bytes(), i), -1);
  }
}

TEST(StoreDiskLimits, FileSizeLimitEndsInObjectStoreFullError) {
  TempStore t(2 * kMiB);
  t.opts.spill_threshold = 0.4;
  t.opts.alloc_timeout = std::chrono::milliseconds(1000);
  // In a child: the file size limit applies to the whole process, its spill thread included.
  const int rc = run_in_child([&] {
    auto s = NodeStore::create(t.opts);  // before the limit: the segment is a file too
    ::signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead of killing us
    rlimit lim{256 << 10, 256 << 10};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return 10;
    const std::string msg = fill_until_full(*s, 512 << 10, 64);
    if (msg.empty()) return 1;
    if (msg.find(t.opts.spill_dir) == std::string::npos) return 2;
    if (s->last_spill_error().find(".h5") == std::string::npos) return 3;
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

TEST(StoreDiskLimits, FullFileSystemEndsInObjectStoreFullError) {
  TempStore t(2 * kMiB);
  t.opts.spill_threshold = 0.4;
  t.opts.alloc_timeout = std::chrono::milliseconds(1000);
  std::filesystem::create_directories(t.opts.spill_dir);
  if (::mount("tmpfs", t.opts.spill_dir.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs CAP_SYS_ADMIN)";
  }
  std::string msg, spill_error;
  {
    auto s = NodeStore::create(t.opts);
    msg = fill_until_full(*s, 512 << 10, 64);
    spill_error = s->last_spill_error();
  }
  ::umount(t.opts.spill_dir.c_str());
  ASSERT_FALSE(msg.empty()) << "the store never refused";
  EXPECT_NE(msg.find(t.opts.spill_dir), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(512 << 10) + " bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("No space left"), std::string::npos) << msg;
  // The spill thread's own failure names the spill file, the object's size and the cause.
  EXPECT_NE(spill_error.find(t.opts.spill_dir), std::string::npos) << spill_error;
  EXPECT_NE(spill_error.find(".h5"), std::string::npos) << spill_error;
  EXPECT_NE(spill_error.find(std::to_string(512 << 10) + " bytes"), std::string::npos)
      << spill_error;
  EXPECT_NE(spill_error.find("No space left"), std::string::npos) << spill_error;
}

// A spill folder the store cannot write in (a read-only file system; root ignores a mode 0500
// folder, so a read-only mount it is): spilling fails, and the store says where and why instead
// of waiting for room forever.
TEST(StoreDiskLimits, ReadOnlySpillFolderIsASpillErrorNamingIt) {
  TempStore t(2 * kMiB);
  t.opts.spill_threshold = 0.4;
  t.opts.alloc_timeout = std::chrono::milliseconds(1000);
  std::filesystem::create_directories(t.opts.spill_dir);
  if (::mount("tmpfs", t.opts.spill_dir.c_str(), "tmpfs", MS_RDONLY, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a read-only tmpfs here (needs CAP_SYS_ADMIN)";
  }
  std::string msg, spill_error;
  {
    auto s = NodeStore::create(t.opts);
    try {
      for (uint64_t i = 0; i < 64; ++i) put(*s, 100 + i, 512 << 10);
    } catch (const SpillError& e) {  // its fallback file cannot be made either
      msg = e.what();
    }
    spill_error = s->last_spill_error();
  }
  ::umount(t.opts.spill_dir.c_str());
  ASSERT_FALSE(msg.empty()) << "the store never refused";
  EXPECT_NE(msg.find(t.opts.spill_dir), std::string::npos) << msg;
  EXPECT_NE(msg.find("Read-only file system"), std::string::npos) << msg;
  EXPECT_NE(msg.find("set session_dir"), std::string::npos) << msg;
  EXPECT_NE(spill_error.find(t.opts.spill_dir), std::string::npos) << spill_error;
  EXPECT_NE(spill_error.find("Read-only file system"), std::string::npos) << spill_error;
}

}  // namespace
}  // namespace weft::store
