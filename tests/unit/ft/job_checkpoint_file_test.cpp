// The job checkpoint file: named objects and actors round-trip exactly; a missing, truncated,
// corrupted, foreign (an actor's checkpoint, not HDF5) or other-build file, and a table that does
// not parse, are CheckpointErrors naming the file, never a crash or an empty result.
#include "ft/job_checkpoint_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "ft/checkpoint_file.hpp"
#include "ft_test_util.hpp"
#include "weft/errors.hpp"

namespace weft::ft {
namespace {
using namespace testing;
using Kind = CheckpointError::Kind;
using EKind = JobCheckpointEntry::Kind;

JobCheckpointContents sample() {
  JobCheckpointContents c;
  c.epoch = 3;
  c.entries.push_back({EKind::kObject, "result", "std::vector<double>", 0, pattern(5000, 1)});
  c.entries.push_back({EKind::kActor, "acc", "Accumulator", 17, pattern(300, 2)});
  c.entries.push_back({EKind::kObject, "empty", "int", 0, {}});
  c.entries.push_back({EKind::kObject, "acc", "int", 0, pattern(8, 3)});  // other kind, same name
  return c;
}

CheckpointError read_error(const std::filesystem::path& f, const std::string& build = "b1") {
  try {
    read_job_checkpoint(f, build);
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find(f.string()), std::string::npos) << e.what();
    return e;
  }
  ADD_FAILURE() << "no CheckpointError for " << f;
  return CheckpointError(Kind::kMissing, "", "", "");
}

TEST(JobCheckpointFile, RoundTripsEveryEntry) {
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  EXPECT_EQ(f.filename(), "job.ckpt.h5");
  const auto in = sample();
  write_job_checkpoint(f, "b1", in);
  EXPECT_TRUE(d.others(f).empty());  // no temporary left beside it
  const auto out = read_job_checkpoint(f, "b1");
  EXPECT_EQ(out.epoch, 3u);
  ASSERT_EQ(out.entries.size(), in.entries.size());
  for (size_t i = 0; i < in.entries.size(); ++i) {
    EXPECT_EQ(out.entries[i].kind, in.entries[i].kind);
    EXPECT_EQ(out.entries[i].name, in.entries[i].name);
    EXPECT_EQ(out.entries[i].type_name, in.entries[i].type_name);
    EXPECT_EQ(out.entries[i].seq, in.entries[i].seq);
    EXPECT_EQ(out.entries[i].bytes, in.entries[i].bytes);
  }
  ASSERT_NE(out.find(EKind::kActor, "acc"), nullptr);
  EXPECT_EQ(out.find(EKind::kActor, "acc")->seq, 17u);
  EXPECT_EQ(out.find(EKind::kObject, "acc")->bytes, pattern(8, 3));
  EXPECT_EQ(out.find(EKind::kActor, "result"), nullptr);
}

TEST(JobCheckpointFile, ANewCheckpointReplacesTheOld) {
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  write_job_checkpoint(f, "b1", sample());
  JobCheckpointContents next;
  next.epoch = 4;
  next.entries.push_back({EKind::kObject, "result", "int", 0, pattern(4, 9)});
  write_job_checkpoint(f, "b1", next);
  const auto out = read_job_checkpoint(f, "b1");
  EXPECT_EQ(out.epoch, 4u);
  ASSERT_EQ(out.entries.size(), 1u);
  EXPECT_EQ(out.entries[0].bytes, pattern(4, 9));
}

TEST(JobCheckpointFile, DuplicateNamesAreRefusedBeforeWriting) {
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  auto c = sample();
  c.entries.push_back({EKind::kActor, "acc", "Accumulator", 1, {}});
  try {
    write_job_checkpoint(f, "b1", c);
    FAIL() << "duplicate accepted";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(e.kind(), Kind::kWriteFailed);
    EXPECT_NE(std::string(e.what()).find("two actors are named 'acc'"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(f));
}

TEST(JobCheckpointFile, MissingFileIsKMissing) {
  TempDir d;
  EXPECT_EQ(read_error(job_checkpoint_path(d.path)).kind(), Kind::kMissing);
}

TEST(JobCheckpointFile, TruncatedFileIsAnError) {
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  write_job_checkpoint(f, "b1", sample());
  auto bytes = file_bytes(f);
  bytes.resize(bytes.size() / 2);
  put_file_bytes(f, bytes);
  const auto k = read_error(f).kind();
  EXPECT_TRUE(k == Kind::kTruncated || k == Kind::kDamaged) << static_cast<int>(k);
}

TEST(JobCheckpointFile, FlippedEntryByteIsCorrupted) {
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  write_job_checkpoint(f, "b1", sample());
  auto bytes = file_bytes(f);
  // Flip a byte of the first object's value: find its pattern in the file.
  const auto needle = pattern(5000, 1);
  const auto at = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.begin() + 64);
  ASSERT_NE(at, bytes.end());
  *(at + 100) ^= 0x20;
  put_file_bytes(f, bytes);
  const auto e = read_error(f);
  EXPECT_EQ(e.kind(), Kind::kCorrupted);
  EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos);
}

TEST(JobCheckpointFile, OtherBuildIsKWrongBuild) {
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  write_job_checkpoint(f, "b1", sample());
  const auto e = read_error(f, "b2");
  EXPECT_EQ(e.kind(), Kind::kWrongBuild);
  EXPECT_NE(std::string(e.what()).find("'b1'"), std::string::npos);
}

TEST(JobCheckpointFile, AnActorCheckpointIsNotAJobCheckpoint) {
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  write_checkpoint(f, CheckpointHeader{"Accumulator", "b1", 5}, pattern(100, 4));
  const auto e = read_error(f);
  EXPECT_EQ(e.kind(), Kind::kWrongClass);
  EXPECT_NE(std::string(e.what()).find(kJobCheckpointClass), std::string::npos);
}

TEST(JobCheckpointFile, NotHdf5IsKNotHdf5) {
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  put_file_bytes(f, pattern(4096, 5));
  EXPECT_EQ(read_error(f).kind(), Kind::kNotHdf5);
}

TEST(JobCheckpointFile, ChecksummedButMalformedTableIsKCorrupted) {
  // A file of the right class and build whose bytes are not a table (a writer's bug, another
  // tool): the checksum passes, the table's own bounds checks catch it.
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  std::vector<char> table = pattern(16, 6);
  const uint32_t magic = 0x4b434a57, version = 1;
  const uint64_t huge = uint64_t(1) << 60;
  std::memcpy(table.data(), &magic, 4);
  std::memcpy(table.data() + 4, &version, 4);
  std::memcpy(table.data() + 8, &huge, 8);
  write_checkpoint(f, CheckpointHeader{kJobCheckpointClass, "b1", 1}, table);
  const auto e = read_error(f);
  EXPECT_EQ(e.kind(), Kind::kCorrupted);
  EXPECT_NE(std::string(e.what()).find("cannot fit"), std::string::npos) << e.what();

  table.resize(4);  // cut inside the header
  write_checkpoint(f, CheckpointHeader{kJobCheckpointClass, "b1", 1}, table);
  EXPECT_NE(std::string(read_error(f).what()).find("table is malformed"), std::string::npos);
}

}  // namespace
}  // namespace weft::ft

namespace weft::ft {
namespace {
using namespace testing;

// The gathered write: the state is the parts' concatenation, whether a 1 MiB slab lies inside one
// part or spans several (and empty parts), checksum included.
TEST(CheckpointFileGather, PartsAreWrittenAsTheirConcatenation) {
  TempDir d;
  const size_t mib = size_t(1) << 20;
  const std::vector<std::vector<char>> parts = {
      pattern(3, 1), pattern(mib - 1, 2), {}, pattern(5, 3), pattern(2 * mib + 7, 4)};
  std::vector<std::span<const char>> views;
  std::vector<char> whole;
  for (const auto& p : parts) {
    views.emplace_back(p.data(), p.size());
    whole.insert(whole.end(), p.begin(), p.end());
  }
  const auto f = checkpoint_path(d.path, "g");
  write_checkpoint(f, CheckpointHeader{"G", "b1", 1},
                   std::span<const std::span<const char>>(views));
  EXPECT_EQ(read_checkpoint(f, "G", "b1").state, whole);
}

TEST(JobCheckpointFile, LargeEntriesAcrossSlabsRoundTrip) {
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  JobCheckpointContents c;
  c.epoch = 1;
  c.entries.push_back({JobCheckpointEntry::Kind::kObject, "a", "t", 0, pattern(1536 * 1024, 7)});
  c.entries.push_back({JobCheckpointEntry::Kind::kActor, "b", "A", 2, pattern(3 << 20, 8)});
  write_job_checkpoint(f, "b1", c);
  const auto out = read_job_checkpoint(f, "b1");
  ASSERT_EQ(out.entries.size(), 2u);
  EXPECT_EQ(out.entries[0].bytes, c.entries[0].bytes);
  EXPECT_EQ(out.entries[1].bytes, c.entries[1].bytes);
  EXPECT_EQ(out.entries[1].seq, 2u);
}

TEST(JobCheckpointFile, NoEntriesRoundTrips) {
  TempDir d;
  const auto f = job_checkpoint_path(d.path);
  write_job_checkpoint(f, "b1", JobCheckpointContents{9, {}});
  const auto out = read_job_checkpoint(f, "b1");
  EXPECT_EQ(out.epoch, 9u);
  EXPECT_TRUE(out.entries.empty());
}

}  // namespace
}  // namespace weft::ft
