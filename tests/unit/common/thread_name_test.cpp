#include "common/thread_name.hpp"

#include <gtest/gtest.h>
#include <pthread.h>

#include <string>
#include <thread>

namespace weft {
namespace {

std::string os_name() {
  char buf[32] = {};
  pthread_getname_np(pthread_self(), buf, sizeof buf);
  return buf;
}

TEST(ThreadName, ARuntimeThreadGetsTheWeftPrefixInTheOs) {
  std::string seen;
  std::thread([&] {
    name_this_thread("loop");
    seen = os_name();
  }).join();
  EXPECT_EQ(seen, "weft-loop");
}

TEST(ThreadName, SpacesBecomeDashesAndTheNameIsCutToTheKernelsFifteenCharacters) {
  std::string spill, long_name;
  std::thread([&] {
    name_this_thread("spill I/O");
    spill = os_name();
  }).join();
  std::thread([&] {
    name_this_thread("a name far longer than fifteen");
    long_name = os_name();
  }).join();
  EXPECT_EQ(spill, "weft-spill-I/O");
  EXPECT_EQ(long_name, "weft-a-name-far");  // the kernel keeps 15 characters
}

TEST(ThreadName, TheFirstNameWins) {
  std::string seen;
  std::thread([&] {
    name_this_thread("driver");
    name_this_thread("pool");  // a driver helping while it waits in get() stays the driver
    seen = os_name();
  }).join();
  EXPECT_EQ(seen, "weft-driver");
}

TEST(ThreadName, TheMainThreadKeepsTheProgramsName) {
  const std::string before = os_name();
  name_this_thread("driver");
  EXPECT_EQ(os_name(), before);
}

}  // namespace
}  // namespace weft
