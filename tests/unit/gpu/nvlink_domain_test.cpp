#include "gpu/nvlink_domain.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "weft/errors.hpp"

namespace weft::gpu {
namespace {

FabricRecord completed(unsigned char first_uuid_byte, unsigned clique, std::string gpu = "nvml:0") {
  FabricRecord r;
  r.gpu = std::move(gpu);
  r.supported = r.completed = true;
  r.cluster_uuid[0] = first_uuid_byte;
  r.cluster_uuid[15] = 0xab;
  r.clique_id = clique;
  return r;
}

FabricProbe fake_probe(std::vector<FabricRecord> records, int* calls = nullptr) {
  return [records, calls](std::string* note) {
    if (calls) ++*calls;
    *note = "fake NVML";
    return records;
  };
}

TEST(DomainFromFabric, CompletedRegistrationNamesClusterAndClique) {
  std::string note;
  auto d = domain_from_fabric({completed(0x12, 7)}, &note);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, "nvl-12000000-0000-0000-0000-0000000000ab-7");
}

TEST(DomainFromFabric, SameUuidDifferentCliqueIsAnotherDomain) {
  std::string note;
  EXPECT_NE(domain_from_fabric({completed(1, 1)}, &note),
            domain_from_fabric({completed(1, 2)}, &note));
}

TEST(DomainFromFabric, UnsupportedPendingFailedOrZeroUuidGiveNoDomain) {
  FabricRecord unsupported;
  FabricRecord pending = completed(1, 1);
  pending.completed = false;
  FabricRecord failed = completed(1, 1);
  failed.status = 3;
  FabricRecord zero = completed(0, 1);
  zero.cluster_uuid[15] = 0;
  std::string note;
  EXPECT_EQ(domain_from_fabric({unsupported, pending, failed, zero}, &note), std::nullopt);
  EXPECT_NE(note.find("without multi-node NVLink"), std::string::npos) << note;
  EXPECT_NE(note.find("not completed"), std::string::npos) << note;
  EXPECT_NE(note.find("failed"), std::string::npos) << note;
  EXPECT_EQ(domain_from_fabric({}, &note), std::nullopt);
}

TEST(DomainFromFabric, DisagreeingGpusUseTheFirstAndSaySo) {
  std::string note;
  auto d = domain_from_fabric({completed(1, 4, "nvml:0"), completed(1, 5, "nvml:1")}, &note);
  EXPECT_EQ(d, domain_from_fabric({completed(1, 4)}, nullptr));
  EXPECT_NE(note.find("another clique than nvml:0"), std::string::npos) << note;
}

TEST(ResolveNvlinkDomain, ExplicitConfigWinsWithoutProbing) {
  Config c;
  c.set("nvlink_domain", "42");
  int calls = 0;
  NvlinkDomain d = resolve_nvlink_domain(c, "h", 3, fake_probe({completed(1, 1)}, &calls));
  EXPECT_EQ(d.name, "42");
  EXPECT_EQ(d.source, "config");
  EXPECT_EQ(calls, 0);
}

TEST(ResolveNvlinkDomain, EmptyOrSpacedConfigIsAConfigError) {
  Config c;
  c.set("nvlink_domain", "");
  EXPECT_THROW(resolve_nvlink_domain(c, "h", 0, fake_probe({})), ConfigError);
  c.set("nvlink_domain", "rack a");
  EXPECT_THROW(resolve_nvlink_domain(c, "h", 0, fake_probe({})), ConfigError);
}

TEST(ResolveNvlinkDomain, NvmlFabricAnswersWhenNothingIsConfigured) {
  NvlinkDomain d = resolve_nvlink_domain(Config{}, "h", 3, fake_probe({completed(9, 2)}));
  EXPECT_EQ(d.source, "nvml");
  EXPECT_EQ(d.name, "nvl-09000000-0000-0000-0000-0000000000ab-2");
}

TEST(ResolveNvlinkDomain, DefaultIsTheNodeItselfWithTheReason) {
  NvlinkDomain d = resolve_nvlink_domain(Config{}, "h", 3, fake_probe({FabricRecord{}}));
  EXPECT_EQ(d.source, "default");
  EXPECT_EQ(d.name, "node-3");
  EXPECT_NE(d.note.find("fake NVML"), std::string::npos) << d.note;
  EXPECT_NE(resolve_nvlink_domain(Config{}, "h", 4, nullptr).name, d.name);
}

TEST(ResolveNvlinkDomain, RealNvmlProbeNeverFailsOnThisHost) {
  // Whatever this host has (no driver here; a GPU node in CI), resolution must answer.
  NvlinkDomain d = resolve_nvlink_domain(Config{}, "h", 0);
  EXPECT_FALSE(d.name.empty());
  EXPECT_TRUE(d.source == "nvml" || d.source == "default") << d.source;
}

class TopologyFileDomain : public ::testing::Test {
 protected:
  void SetUp() override {
    int fd = mkstemp(path_);
    ASSERT_GE(fd, 0);
    close(fd);
    std::ofstream(path_) << "gpu[01-18] rack-a\nnode:7 sim\n";
  }
  void TearDown() override { std::remove(path_); }
  char path_[32] = "/tmp/weft-topo-XXXXXX";
};

TEST_F(TopologyFileDomain, RuleForHostOrIndexBeatsNvml) {
  Config c;
  c.set("topology_file", path_);
  auto probe = fake_probe({completed(1, 1)});
  EXPECT_EQ(resolve_nvlink_domain(c, "gpu05", 0, probe).name, "rack-a");
  NvlinkDomain d = resolve_nvlink_domain(c, "other", 7, probe);
  EXPECT_EQ(d.name, "sim");
  EXPECT_EQ(d.source, "topology_file");
}

TEST_F(TopologyFileDomain, UnmatchedNodeFallsThroughToNvmlThenDefault) {
  Config c;
  c.set("topology_file", path_);
  NvlinkDomain d = resolve_nvlink_domain(c, "other", 1, fake_probe({completed(1, 1)}));
  EXPECT_EQ(d.source, "nvml");
  EXPECT_NE(d.note.find("no rule"), std::string::npos) << d.note;
  EXPECT_EQ(resolve_nvlink_domain(c, "other", 1, fake_probe({})).name, "node-1");
}

TEST_F(TopologyFileDomain, MissingFileIsAConfigError) {
  Config c;
  c.set("topology_file", std::string(path_) + ".missing");
  EXPECT_THROW(resolve_nvlink_domain(c, "h", 0, fake_probe({})), ConfigError);
}

}  // namespace
}  // namespace weft::gpu
