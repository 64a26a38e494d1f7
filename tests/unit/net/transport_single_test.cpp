// The transport in a one-rank job (MPI singleton, no mpirun): self-messages in order, wake()
// from another thread, rma_get of our own regions, and the typed errors of misuse.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common/config.hpp"
#include "net/net_error.hpp"
#include "net/topology.hpp"
#include "net/transport.hpp"

namespace weft::net {
namespace {

struct RecordingSink : MessageSink {
  std::vector<std::pair<uint16_t, std::string>> got;
  void on_message(int src, uint16_t type, const char* d, size_t n) override {
    EXPECT_EQ(src, 0);
    got.emplace_back(type, std::string(d ? d : "", n));
  }
};

class SingleRank : public ::testing::Test {
 protected:
  void SetUp() override {
    topo_ = discover_topology(MPI_COMM_WORLD, cfg_);
    t_ = std::make_unique<Transport>(MPI_COMM_WORLD, topo_, cfg_);
  }
  Config cfg_;
  Topology topo_;
  std::unique_ptr<Transport> t_;
};

TEST_F(SingleRank, TopologyOfOneRank) {
  EXPECT_EQ(topo_.size, 1);
  EXPECT_EQ(topo_.num_nodes, 1);
  EXPECT_EQ(topo_.local_ranks, std::vector<int>{0});
  EXPECT_EQ(topo_.job_id.size(), 16u);
}

TEST_F(SingleRank, SelfMessagesArriveInOrderAfterPoll) {
  RecordingSink s;
  t_->send(0, 1, "a", 1);
  t_->send(0, 2, "bc", 2, "de", 2);  // gather form
  t_->send(0, 3, nullptr, 0);
  EXPECT_FALSE(t_->idle());
  EXPECT_TRUE(s.got.empty()) << "send never delivers synchronously";
  EXPECT_GT(t_->poll(s), 0u);
  ASSERT_EQ(s.got.size(), 3u);
  EXPECT_EQ(s.got[0], (std::pair<uint16_t, std::string>{1, "a"}));
  EXPECT_EQ(s.got[1], (std::pair<uint16_t, std::string>{2, "bcde"}));
  EXPECT_EQ(s.got[2], (std::pair<uint16_t, std::string>{3, ""}));
  EXPECT_TRUE(t_->idle());
  EXPECT_EQ(t_->poll(s), 0u);
}

TEST_F(SingleRank, WaitReturnsOnWakeFromAnotherThread) {
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    t_->wake();
  });
  const auto t0 = std::chrono::steady_clock::now();
  t_->wait(std::chrono::seconds(10));
  waker.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  // A wake with nobody waiting is remembered: the next wait returns at once.
  t_->wake();
  const auto t1 = std::chrono::steady_clock::now();
  t_->wait(std::chrono::seconds(10));
  EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::seconds(5));
  // And an idle wait honours its timeout.
  const auto t2 = std::chrono::steady_clock::now();
  t_->wait(std::chrono::milliseconds(30));
  EXPECT_GE(std::chrono::steady_clock::now() - t2, std::chrono::milliseconds(20));
}

TEST_F(SingleRank, RmaGetOfOwnRegion) {
  std::vector<char> region(8192);
  for (size_t i = 0; i < region.size(); ++i) region[i] = static_cast<char>(i * 7);
  const int id = t_->register_region(region.data(), region.size());
  std::vector<char> dst(100);
  bool done = false, ok = false;
  t_->rma_get(0, id, 1000, dst.data(), dst.size(),
              [&](bool o, const std::string&) { done = true, ok = o; });
  RecordingSink s;
  t_->poll(s);
  ASSERT_TRUE(done);
  EXPECT_TRUE(ok);
  EXPECT_TRUE(std::equal(dst.begin(), dst.end(), region.begin() + 1000));
  EXPECT_THROW(t_->rma_get(0, id, 8000, dst.data(), 193, [](bool, const std::string&) {}),
               TransportError);
  EXPECT_THROW(t_->rma_get(0, id + 1, 0, dst.data(), 1, [](bool, const std::string&) {}),
               TransportError);
}

TEST_F(SingleRank, MisuseIsATypedError) {
  EXPECT_THROW(t_->send(1, 1, "x", 1), TransportError);
  EXPECT_THROW(t_->send(-1, 1, "x", 1), TransportError);
  EXPECT_THROW(t_->send(0, kFirstReservedType, "x", 1), TransportError);
  Config bad;
  bad.set("ring_bytes", "1K");
  EXPECT_THROW(Transport(MPI_COMM_WORLD, topo_, bad), ConfigError);
  bad = Config();
  bad.set("transfer", "rdma");
  try {
    Transport t(MPI_COMM_WORLD, topo_, bad);
    ADD_FAILURE() << "expected ConfigError for transfer=rdma";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("WEFT_TRANSFER"), std::string::npos) << e.what();
  }
  bad = Config();
  bad.set("virtual_nodes", "-1");
  EXPECT_THROW(discover_topology(MPI_COMM_WORLD, bad), ConfigError);
}

}  // namespace
}  // namespace weft::net

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
