// A checkpoint written to a full file system: CheckpointError naming the file and the errno text,
// no temporary left, the previous checkpoint intact and readable, and the next write that fits
// succeeds. The full file system is a 64 KiB tmpfs mounted for the test (root only; skipped
// otherwise, with the reason).
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include "ft/checkpoint_file.hpp"
#include "ft_test_util.hpp"
#include "weft/errors.hpp"

namespace weft::ft {
namespace {
using namespace testing;

class CheckpointDiskFull : public ::testing::Test {
 protected:
  void SetUp() override {
    mnt_ = dir_.path / "tiny";
    std::filesystem::create_directory(mnt_);
    if (::mount("tmpfs", mnt_.c_str(), "tmpfs", 0, "size=64k") != 0) {
      GTEST_SKIP() << "cannot mount a 64 KiB tmpfs to fill (" << std::strerror(errno)
                   << "; needs root)";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(mnt_.c_str(), MNT_DETACH);
  }
  TempDir dir_;
  std::filesystem::path mnt_;
  bool mounted_ = false;
};

TEST_F(CheckpointDiskFull, IsATypedErrorAndKeepsThePreviousCheckpoint) {
  const auto file = checkpoint_path(mnt_, "ctr");
  write_checkpoint(file, {"Counter", "b", 1}, pattern(8 << 10, 1));
  try {
    write_checkpoint(file, {"Counter", "b", 2}, pattern(256 << 10, 2));
    FAIL() << "a 256 KiB checkpoint fit into a 64 KiB file system";
  } catch (const CheckpointError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.kind(), CheckpointError::Kind::kDiskFull) << m;
    EXPECT_NE(m.find(file.string()), std::string::npos) << m;
    EXPECT_NE(m.find(std::strerror(ENOSPC)), std::string::npos) << m;
    EXPECT_NE(m.find("previous checkpoint, if any, is unchanged"), std::string::npos) << m;
  }
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(mnt_)) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"ctr.ckpt.h5"}) << "the temporary was not removed";
  const Checkpoint c = read_checkpoint(file, "Counter", "b");
  EXPECT_EQ(c.header.seq, 1u);
  EXPECT_EQ(c.state, pattern(8 << 10, 1));
  // The failed write gave its space back: a checkpoint that fits goes through.
  write_checkpoint(file, {"Counter", "b", 3}, pattern(16 << 10, 3));
  EXPECT_EQ(read_checkpoint(file, "Counter", "b").state, pattern(16 << 10, 3));
}

}  // namespace
}  // namespace weft::ft
