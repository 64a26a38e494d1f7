// Gangs across processes (mpirun -n 2): the unique id travels by MPI_Bcast through
// NcclGang::bootstrap, exactly as the runtime's broadcast will carry it. With 2+ GPUs each rank
// takes its own device; with one GPU both ranks share it, where NCCL may refuse ("duplicate
// GPU") — then every rank must get a GangError naming its device, never a hang.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>

#include "gpu/gpu_discovery.hpp"
#include "gpu/nccl_gang.hpp"
#include "gpu_test_util.hpp"

namespace weft::gpu {
namespace {

using std::chrono::milliseconds;

int rank_in(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int size_of(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}

// The broadcast NcclGang::bootstrap needs, over an MPI communicator whose rank 0 is member 0.
std::function<NcclGang::UniqueId(const NcclGang::UniqueId&)> mpi_broadcast(MPI_Comm comm) {
  return [comm](const NcclGang::UniqueId& mine) {
    int n = static_cast<int>(mine.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, comm);
    NcclGang::UniqueId id = rank_in(comm) == 0 ? mine : NcclGang::UniqueId(n);
    if (n > 0) MPI_Bcast(id.data(), n, MPI_BYTE, 0, comm);
    return id;
  };
}

bool all_ranks(bool mine) {
  int in = mine ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return out == 1;
}

class GangAcrossProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    inv_ = discover_gpus();
    if (inv_.devices.empty()) GTEST_SKIP() << "WEFT_NO_GPU_VISIBLE: " << inv_.note;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    local_rank_ = rank_in(node);
    MPI_Comm_free(&node);
    device_ = local_rank_ % static_cast<int>(inv_.devices.size());
  }
  GpuInventory inv_;
  int local_rank_ = 0;
  int device_ = 0;
};

TEST_F(GangAcrossProcesses, AllReduceSumsEveryMembersValues) {
  const int me = rank_in(MPI_COMM_WORLD), n = size_of(MPI_COMM_WORLD);
  const bool shared_gpu = static_cast<int>(inv_.devices.size()) < n;
  constexpr size_t kN = 1 << 18;
  try {
    NcclGang gang =
        NcclGang::bootstrap(me, n, device_, mpi_broadcast(MPI_COMM_WORLD), milliseconds(30000));
    WEFT_CUDA_OK(cudaSetDevice(device_));
    std::vector<float> host(kN);
    for (size_t i = 0; i < kN; ++i) host[i] = static_cast<float>((me + 1) * (i % 4096));
    testing::DeviceFloats buf(kN);
    ASSERT_TRUE(buf.upload(host));
    testing::Stream stream;
    gang.check(
        ncclAllReduce(buf.get(), buf.get(), kN, ncclFloat, ncclSum, gang.comm(), stream.get()),
        "ncclAllReduce");
    WEFT_CUDA_OK(cudaStreamSynchronize(stream.get()));
    std::vector<float> got = buf.download();
    ASSERT_EQ(got.size(), kN);
    const float members_sum = n * (n + 1) / 2.0f;  // 1 + 2 + ... + n
    size_t wrong = 0;
    for (size_t i = 0; i < kN; ++i) wrong += got[i] != members_sum * static_cast<float>(i % 4096);
    EXPECT_EQ(wrong, 0u) << "rank " << me << " on device " << device_;
    std::cout << "rank " << me << ": gang of " << n << " on device " << device_
              << (shared_gpu ? " (shared)" : "") << " all-reduced " << kN << " floats\n";
  } catch (const GangError& e) {
    // Only acceptable where ranks share one GPU, which NCCL may refuse; the error must say where.
    std::cout << "rank " << me << ": " << e.what() << "\n";
    EXPECT_TRUE(shared_gpu) << e.what();
    EXPECT_EQ(e.device(), device_);
    EXPECT_NE(std::string(e.what()).find("device " + std::to_string(device_)), std::string::npos);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_F(GangAcrossProcesses, EveryJoinedMemberTimesOutWhenOneNeverComes) {
  const int me = rank_in(MPI_COMM_WORLD), n = size_of(MPI_COMM_WORLD);
  const milliseconds limit(2000);
  bool timed_out = false;
  try {
    // A gang one larger than the job: member n never joins.
    NcclGang::bootstrap(me, n + 1, device_, mpi_broadcast(MPI_COMM_WORLD), limit);
  } catch (const GangError& e) {
    std::cout << "rank " << me << ": " << e.what() << "\n";
    timed_out = std::string(e.what()).find("timed out") != std::string::npos &&
                e.elapsed() >= limit && e.elapsed() < limit + milliseconds(20000);
  }
  EXPECT_TRUE(all_ranks(timed_out));
}

TEST_F(GangAcrossProcesses, SeparateGangsOfOneFormSideBySide) {
  const int me = rank_in(MPI_COMM_WORLD);
  MPI_Comm alone;
  MPI_Comm_split(MPI_COMM_WORLD, me, 0, &alone);
  bool ok = false;
  {
    NcclGang gang = NcclGang::bootstrap(0, 1, device_, mpi_broadcast(alone), milliseconds(30000));
    ok = static_cast<bool>(gang) && gang.size() == 1;
  }
  MPI_Comm_free(&alone);
  EXPECT_TRUE(all_ranks(ok));
}

}  // namespace
}  // namespace weft::gpu

int main(int argc, char** argv) {
  // Loopback only, also when run by hand (CTest sets these too).
  setenv("NCCL_SOCKET_IFNAME", "lo", 0);
  setenv("NCCL_IB_DISABLE", "1", 0);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
