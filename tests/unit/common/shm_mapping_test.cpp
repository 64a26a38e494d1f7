// The shared-memory mapping type used by the store and the transport: segments are shared
// between mappings, names are exclusive, and every failure names the segment and the size (and,
// when /dev/shm is too small, says what to do).
#include "common/shm_mapping.hpp"

#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <string>

#include "weft/errors.hpp"

namespace weft {
namespace {

std::string unique_name() {
  static std::atomic<int> n{0};
  return "/weft_shm_mapping_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ShmMapping, CreatedSegmentIsSharedWithAttachersUntilRemoved) {
  const std::string name = unique_name();
  Mapping a = shm_create(name, 1 << 20);
  ASSERT_TRUE(a);
  EXPECT_EQ(a.size(), 1u << 20);
  EXPECT_EQ(a.data()[12345], 0);  // sized segments start zero-filled
  std::strcpy(a.data() + 100, "hello");
  Mapping b = shm_attach(name);
  ASSERT_EQ(b.size(), 1u << 20);
  EXPECT_STREQ(b.data() + 100, "hello");
  Mapping c = shm_attach(name.substr(1), 4096);  // the leading '/' is optional
  EXPECT_EQ(c.size(), 4096u);
  shm_remove(name);
  EXPECT_STREQ(b.data() + 100, "hello");  // mappings outlive the name
  const std::string msg = error_of([&] { shm_attach(name); });
  EXPECT_NE(msg.find(name), std::string::npos) << msg;
}

TEST(ShmMapping, MovedMappingIsUnmappedOnce) {
  const std::string name = unique_name();
  Mapping a = shm_create(name, 8192);
  void* at = a.addr();
  Mapping b = std::move(a);
  EXPECT_FALSE(a);
  EXPECT_EQ(b.addr(), at);
  b = Mapping();
  EXPECT_FALSE(b);
  shm_remove(name);
}

TEST(ShmMapping, ExistingNameIsAnErrorNamingSegmentAndSize) {
  const std::string name = unique_name();
  Mapping a = shm_create(name, 4096);
  const std::string msg = error_of([&] { shm_create(name, 8192); });
  EXPECT_NE(msg.find(name), std::string::npos) << msg;
  EXPECT_NE(msg.find("8192 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unique"), std::string::npos) << msg;
  shm_remove(name);
}

TEST(ShmMapping, SegmentLargerThanFreeShmSpaceIsRefusedUpFront) {
  struct statvfs vfs {};
  ASSERT_EQ(::statvfs("/dev/shm", &vfs), 0);
  const size_t avail = size_t(vfs.f_bavail) * vfs.f_frsize;
  const size_t want = avail + (size_t(1) << 30);
  const std::string name = unique_name();
  const std::string msg = error_of([&] { shm_create(name, want); });
  EXPECT_NE(msg.find(name), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(want) + " bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("/dev/shm is full"), std::string::npos) << msg;
  EXPECT_NE(msg.find("WEFT_OBJECT_STORE_MEMORY"), std::string::npos) << msg;
  // Nothing was left behind under the name.
  EXPECT_FALSE(error_of([&] { shm_attach(name); }).empty());
}

TEST(ShmMapping, AttachingMoreThanTheSegmentHoldsNamesBothSizes) {
  const std::string name = unique_name();
  Mapping a = shm_create(name, 4096);
  const std::string msg = error_of([&] { shm_attach(name, 1 << 20); });
  EXPECT_NE(msg.find(name), std::string::npos) << msg;
  EXPECT_NE(msg.find("1048576 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("only 4096 bytes"), std::string::npos) << msg;
  shm_remove(name);
}

}  // namespace
}  // namespace weft
