#include "gpu/topology_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "weft/errors.hpp"

namespace weft::gpu {
namespace {

TEST(ExpandHostlist, PlainNameIsItself) {
  EXPECT_EQ(expand_hostlist("gpu017", "t"), std::vector<std::string>{"gpu017"});
}

TEST(ExpandHostlist, RangesAndListsKeepZeroPadding) {
  EXPECT_EQ(expand_hostlist("gpu[008-010,015]", "t"),
            (std::vector<std::string>{"gpu008", "gpu009", "gpu010", "gpu015"}));
}

TEST(ExpandHostlist, SeveralGroupsMultiply) {
  EXPECT_EQ(expand_hostlist("r[1-2]n[1,3]-ib", "t"),
            (std::vector<std::string>{"r1n1-ib", "r1n3-ib", "r2n1-ib", "r2n3-ib"}));
}

TEST(ExpandHostlist, MalformedListsAreConfigErrors) {
  EXPECT_THROW(expand_hostlist("gpu[1-", "t"), ConfigError);
  EXPECT_THROW(expand_hostlist("gpu1]", "t"), ConfigError);
  EXPECT_THROW(expand_hostlist("gpu[5-2]", "t"), ConfigError);
  EXPECT_THROW(expand_hostlist("gpu[a-b]", "t"), ConfigError);
  EXPECT_THROW(expand_hostlist("gpu[0-99999999]", "t"), ConfigError);
}

constexpr const char* kRacks = R"(# two NVL72 racks and a simulated pair
gpu[001-018]      rack-a
gpu[019-036,040]  rack-b   # trailing comment
login*            login

node:0-1,5        sim-0
node:2            sim-1
gpu001            never-used   # first matching rule wins
)";

TEST(TopologyMap, MatchesHostListsGlobsAndNodeIndexes) {
  TopologyMap m = TopologyMap::parse(kRacks, "racks.txt");
  EXPECT_EQ(m.rule_count(), 6u);
  EXPECT_EQ(m.domain_of("gpu007", 99), "rack-a");
  EXPECT_EQ(m.domain_of("gpu040", 99), "rack-b");
  EXPECT_EQ(m.domain_of("login3", 99), "login");
  EXPECT_EQ(m.domain_of("anyhost", 5), "sim-0");
  EXPECT_EQ(m.domain_of("anyhost", 2), "sim-1");
  EXPECT_EQ(m.domain_of("gpu001", 99), "rack-a");
  EXPECT_EQ(m.domain_of("gpu037", 99), std::nullopt);
  EXPECT_EQ(m.domain_of("gpu7", 3), std::nullopt);  // no padding match, no node rule for 3
}

TEST(TopologyMap, ErrorsNameTheOriginAndLine) {
  try {
    TopologyMap::parse("gpu1 rack\n\ngpu2\n", "my.topo");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("my.topo:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no domain"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TopologyMap::parse("gpu1 rack extra\n", "t"), ConfigError);
  EXPECT_THROW(TopologyMap::parse("node:x rack\n", "t"), ConfigError);
  EXPECT_THROW(TopologyMap::parse("node:3-1 rack\n", "t"), ConfigError);
  try {
    TopologyMap::parse("a b\ngpu[3-1] rack\n", "f");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("f:2"), std::string::npos) << e.what();
  }
}

TEST(TopologyMap, EmptyTextHasNoRules) {
  TopologyMap m = TopologyMap::parse("# nothing\n\n   \n", "t");
  EXPECT_EQ(m.rule_count(), 0u);
  EXPECT_EQ(m.domain_of("h", 0), std::nullopt);
}

TEST(TopologyMap, LoadReadsAFileAndRejectsAMissingOne) {
  char path[] = "/tmp/weft-topo-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  { std::ofstream(path) << "node:0 rack-x\n"; }
  EXPECT_EQ(TopologyMap::load(path).domain_of("h", 0), "rack-x");
  std::remove(path);
  try {
    TopologyMap::load(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace weft::gpu
