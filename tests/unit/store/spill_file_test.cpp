// The spill file format and its checksum: objects of awkward sizes round-trip exactly, the file
// is an ordinary HDF5 file whose "data" dataset holds the object's bytes (the store writes them
// itself at the dataset's offset), and the checksum catches single-bit flips anywhere.
#include "store/spill_file.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cstring>
#include <fstream>
#include <filesystem>
#include <fstream>
#include <vector>

#include "store/checksum.hpp"
#include "store_test_util.hpp"
#include "weft/errors.hpp"

namespace weft::store {
namespace {
using namespace testing;

std::vector<std::byte> patterned(size_t n, uint64_t seq) {
  std::vector<std::byte> v(n);
  fill_pattern(v, seq);
  return v;
}

// A spill directory with object `seq` (n patterned bytes) spilled to it; returns the file's path.
std::string spilled(const TempStore& t, uint64_t seq, const std::vector<std::byte>& src) {
  std::filesystem::create_directories(t.opts.spill_dir);
  const std::string path = spill_path(t.opts.spill_dir, oid(seq));
  bool full = true;
  write_spill_file(path, oid(seq), src, &full);
  EXPECT_FALSE(full);
  return path;
}

// Reads dataset "data" of `path` through HDF5 itself.
std::vector<std::byte> read_with_hdf5(const std::string& path) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(f, 0) << path;
  hid_t d = H5Dopen2(f, "data", H5P_DEFAULT);
  hid_t sp = H5Dget_space(d);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(sp, &n, nullptr);
  std::vector<std::byte> out(n);
  if (n > 0) {
    EXPECT_GE(H5Dread(d, H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0);
  }
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
  return out;
}

TEST(SpillFile, AwkwardSizesRoundTripAndAreOrdinaryHdf5) {
  TempStore t(1 << 20);
  std::filesystem::create_directories(t.opts.spill_dir);
  uint64_t seq = 0;
  for (size_t n : {size_t(0), size_t(1), size_t(63), size_t(64), size_t(65), size_t(2047),
                   size_t(2048), size_t(4097), (size_t(256) << 10) + 1, (size_t(3) << 20) + 5}) {
    ++seq;
    const auto src = patterned(n, seq);
    const std::string path = spill_path(t.opts.spill_dir, oid(seq));
    bool full = true;
    write_spill_file(path, oid(seq), src, &full);
    EXPECT_FALSE(full);
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp")) << "temporary left behind";
    std::vector<std::byte> back(n, std::byte{0x5a});
    read_spill_file(path, oid(seq), back);
    EXPECT_EQ(back, src) << "size " << n;
    EXPECT_EQ(read_with_hdf5(path), src) << "HDF5's view of size " << n;
  }
}

TEST(SpillFile, ReadingIntoTheWrongSizeNamesBothSizes) {
  TempStore t(1 << 20);
  const auto src = patterned(5000, 3);
  const std::string path = spilled(t, 3, src);
  std::vector<std::byte> back(4000);
  try {
    read_spill_file(path, oid(3), back);
    FAIL() << "size mismatch accepted";
  } catch (const SpillError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("5000"), std::string::npos) << m;
    EXPECT_NE(m.find("4000"), std::string::npos) << m;
    EXPECT_NE(m.find(path), std::string::npos) << m;
  }
}

// Spill files are in HDF5's 1.8+ format, whose metadata is checksummed; a file in the older
// format is refused before HDF5 parses it (there HDF5 1.10 trusts the sizes it reads: one
// flipped byte made it ask for 47 TB, found by tests/fuzz spill_file).
TEST(SpillFile, TheOldUncheckedHdf5FormatIsRefusedBeforeHdf5ReadsIt) {
  TempStore t(1 << 20);
  const auto src = patterned(300, 4);
  const std::string path = spilled(t, 4, src);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  char version = 0;
  f.seekg(8);
  f.read(&version, 1);
  EXPECT_GE(version, 2) << "superblock version";
  for (char old : {char{0}, char{1}}) {
    f.seekp(8);
    f.write(&old, 1);
    f.flush();
    std::vector<std::byte> back(src.size());
    try {
      read_spill_file(path, oid(4), back);
      FAIL() << "superblock version " << int(old) << " accepted";
    } catch (const SpillError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("superblock version " + std::to_string(old)), std::string::npos) << m;
    }
  }
}

TEST(SpillFile, TruncatedDataIsASpillErrorWithTheSizes) {
  TempStore t(1 << 20);
  const size_t n = 1 << 20;
  const auto src = patterned(n, 4);
  const std::string path = spilled(t, 4, src);
  // Cut into the data but keep HDF5's metadata readable: the data ends past the file's end.
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - n / 2);
  std::vector<std::byte> back(n);
  try {
    read_spill_file(path, oid(4), back);
    FAIL() << "truncated file accepted";
  } catch (const SpillError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(n) + " bytes"), std::string::npos) << m;
  }
}

// Where the file cannot be mapped (address space exhausted here; a file system without mmap
// elsewhere), a restore reads it instead and still verifies every byte.
TEST(SpillFile, RestoreWithoutMmapReadsAndVerifies) {
  TempStore t(1 << 20);
  const size_t n = size_t(48) << 20;
  const auto src = patterned(n, 5);
  const std::string path = spilled(t, 5, src);
  const int rc = run_in_child([&] {
    std::vector<std::byte> back(n);
    std::memset(back.data(), 0, n);
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    if (pages <= 0) return 10;
    // Room for HDF5's small allocations, not for a 48 MiB mapping.
    const rlim_t limit = rlim_t(pages) * ::sysconf(_SC_PAGESIZE) + (rlim_t(16) << 20);
    rlimit lim{limit, limit};
    if (::setrlimit(RLIMIT_AS, &lim) != 0) return 11;
    if (::mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED) {
      return 12;  // the limit does not bind here: nothing to test
    }
    read_spill_file(path, oid(5), back);
    return back == src ? 0 : 1;
  });
  if (rc == 12 || rc == 11) GTEST_SKIP() << "RLIMIT_AS does not limit mmap here";
  EXPECT_EQ(rc, 0);
}

TEST(Checksum, StreamingInPiecesEqualsOneShot) {
  const auto v = patterned((size_t(1) << 20) + 37, 9);
  const uint64_t whole = checksum(v);
  for (size_t piece : {size_t(64), size_t(1024), size_t(4096) + 64, size_t(256) << 10}) {
    Checksum c;
    size_t off = 0;
    for (; off + piece < v.size(); off += piece) c.update(std::span(v).subspan(off, piece));
    c.update(std::span(v).subspan(off));
    EXPECT_EQ(c.finish(), whole) << "pieces of " << piece;
  }
}

// A large spill (checksummed on a helper thread) that fails midway reports the file, the size and
// the cause, counts as disk full, and leaves no temporary file.
TEST(SpillFile, LargeSpillFailingMidwayIsASpillErrorAndLeavesNothing) {
  TempStore t(1 << 20);
  std::filesystem::create_directories(t.opts.spill_dir);
  const size_t n = size_t(32) << 20;
  const auto src = patterned(n, 7);
  const std::string path = spill_path(t.opts.spill_dir, oid(7));
  const int rc = run_in_child([&] {
    ::signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead of killing us
    rlimit lim{4 << 20, 4 << 20};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return 10;
    bool full = false;
    try {
      write_spill_file(path, oid(7), src, &full);
      return 1;
    } catch (const SpillError& e) {
      const std::string m = e.what();
      if (m.find(path) == std::string::npos) return 2;
      if (m.find(std::to_string(n) + " bytes") == std::string::npos) return 3;
      if (m.find("File too large") == std::string::npos) return 4;
    }
    if (!full) return 5;
    if (std::filesystem::exists(path) || std::filesystem::exists(path + ".tmp")) return 6;
    return 0;
  });
  EXPECT_EQ(rc, 0);
}

// Copy-and-checksum gives the bytes and the sum of update(), for small and large copies (large
// aligned ones use streaming stores) and for destinations at every alignment.
TEST(Checksum, CopyAndUpdateCopiesExactlyAndSumsAsUpdate) {
  for (size_t n : {size_t(100), (size_t(4) << 20) + 77, size_t(9) << 20}) {
    const auto v = patterned(n, 13);
    for (size_t shift : {size_t(0), size_t(8), size_t(16), size_t(3)}) {
      std::vector<std::byte> buf(n + 64, std::byte{0x11});
      std::byte* to = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
      to += shift;
      if (to + n > buf.data() + buf.size()) to -= 64;
      Checksum c;
      c.copy_and_update(v, to);
      EXPECT_EQ(c.finish(), checksum(v)) << n << " shift " << shift;
      EXPECT_EQ(std::memcmp(to, v.data(), n), 0) << n << " shift " << shift;
    }
  }
}

TEST(SpillFile, LargeRestoreIntoAnUnalignedBufferIsExact) {
  TempStore t(1 << 20);
  const size_t n = (size_t(70) << 20) + 9;  // two mapping windows, the second one partial
  const auto src = patterned(n, 6);
  const std::string path = spilled(t, 6, src);
  std::vector<std::byte> buf(n + 8);
  for (size_t shift : {size_t(0), size_t(8)}) {
    std::span<std::byte> out(buf.data() + shift, n);
    read_spill_file(path, oid(6), out);
    EXPECT_EQ(std::memcmp(out.data(), src.data(), n), 0) << "shift " << shift;
  }
}

TEST(Checksum, EverySingleBitFlipAndLengthChangeIsDetected) {
  auto v = patterned(4096 + 13, 11);
  const uint64_t good = checksum(v);
  for (size_t byte = 0; byte < v.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      v[byte] ^= std::byte(1 << bit);
      ASSERT_NE(checksum(v), good) << "flip of bit " << bit << " of byte " << byte;
      v[byte] ^= std::byte(1 << bit);
    }
  }
  EXPECT_NE(checksum(std::span(v).first(v.size() - 1)), good);
  std::vector<std::byte> zeros(4096), more_zeros(4096 + 64);
  EXPECT_NE(checksum(zeros), checksum(more_zeros));
  // Swapping two 8-byte words (same lane, different stripes) changes the sum.
  auto w = patterned(4096, 12);
  const uint64_t before = checksum(w);
  std::swap_ranges(w.begin(), w.begin() + 8, w.begin() + 1024);
  EXPECT_NE(checksum(w), before);
}

}  // namespace
}  // namespace weft::store
