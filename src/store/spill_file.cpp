#include "store/spill_file.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "common/shm_mapping.hpp"
#include "store/checksum.hpp"
#include "weft/errors.hpp"

namespace weft::store {
namespace {

// Object bytes move between memory and the file without HDF5 in the way, at the dataset's file
// offset (H5Dget_offset of a contiguous, early-allocated dataset): a spill pwrites slabs (the
// checksum runs beside it on a helper thread for large objects, else on each slab just before it
// is written, while it is in cache); a restore maps the file and copies and checksums in one pass.
// No staging copy and no per-call HDF5 overhead; the file stays an ordinary HDF5 file (h5dump
// reads it) whose metadata HDF5 writes.
constexpr uint64_t kSlab = 256ull << 10;
// Spills of at least this size checksum on a helper thread (below it, starting one costs more
// than it saves).
constexpr uint64_t kHelperChecksumMin = 16ull << 20;
// Restores map the file in windows of this size (a multiple of Checksum::kStripe).
constexpr uint64_t kMapWindow = 64ull << 20;

// Full pwrite/pread of [p, p+n) at `off`, retrying short transfers and EINTR; false with errno set
// on failure (a read that meets the end of the file fails with errno 0).
bool pwrite_all(int fd, const std::byte* p, uint64_t n, uint64_t off) {
  while (n > 0) {
    const ssize_t k = ::pwrite(fd, p, n, static_cast<off_t>(off));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k, n -= k, off += k;
  }
  return true;
}
bool pread_all(int fd, std::byte* p, uint64_t n, uint64_t off) {
  while (n > 0) {
    const ssize_t k = ::pread(fd, p, n, static_cast<off_t>(off));
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) errno = 0;
    if (k <= 0) return false;
    p += k, n -= k, off += k;
  }
  return true;
}

// Owns one HDF5 identifier.
class H5Id {
 public:
  H5Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~H5Id() { release(); }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  H5Id(H5Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  H5Id& operator=(H5Id&& o) noexcept {
    release();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
    return *this;
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  // Closes now and reports whether the close (which flushes) succeeded.
  bool release() {
    bool ok = true;
    if (id_ >= 0) ok = close_(id_) >= 0;
    id_ = -1;
    return ok;
  }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// HDF5's automatic error printing is per thread in thread-safe builds: turn it off in every
// thread that does spill I/O (errors become SpillError, not stderr noise).
void init_hdf5_once() {
  static std::once_flag once;
  std::call_once(once, [] { H5open(); });
  thread_local bool quiet = false;
  if (!quiet) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    quiet = true;
  }
}

H5Id file_access() {
  H5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // Spill files are private to one node's store; POSIX locks would only add failure modes on
  // network and sandboxed file systems.
  H5Pset_file_locking(fapl.get(), false, true);
  // HDF5 handles only metadata (the object's bytes go through pwrite/pread): no sieve buffer.
  H5Pset_sieve_buf_size(fapl.get(), 0);
  // The 1.8+ format (superblock version >= 2) checksums the superblock and the object headers,
  // so damaged metadata fails at open; read_spill_file refuses the older, unchecksummed one
  // before HDF5 parses it (there, HDF5 1.10 trusts sizes it reads: a flipped byte made it ask
  // for 47 TB, found by tests/fuzz spill_file).
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  return fapl;
}

// HDF5's signature at offset 0 (spill files have no user block) and the superblock version
// after it: what this build writes, before HDF5 sees the file. Empty when it is; else why not.
std::string check_superblock(int fd) {
  constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char head[sizeof kSignature + 1] = {};
  const ssize_t got = ::pread(fd, head, sizeof head, 0);
  if (got != static_cast<ssize_t>(sizeof head) || std::memcmp(head, kSignature, sizeof kSignature))
    return "spill file is not an HDF5 file (no HDF5 signature at its start)";
  if (head[sizeof kSignature] < 2) {
    return "spill file has HDF5 superblock version " + std::to_string(head[sizeof kSignature]) +
           " (unchecksummed metadata; this build writes version 2 or later)";
  }
  return {};
}

[[noreturn]] void fail(const std::string& what, const std::string& path, const ObjectId& id,
                       uint64_t size) {
  throw SpillError("object store: " + what + " (spill file " + path + ", object " + id.str() +
                   ", " + std::to_string(size) + " bytes)");
}

template <class T>
bool write_attr(hid_t obj, const char* name, hid_t type, T value) {
  H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Id attr(H5Acreate2(obj, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return attr.ok() && H5Awrite(attr.get(), type, &value) >= 0;
}

template <class T>
bool update_attr(hid_t obj, const char* name, hid_t type, T value) {
  H5Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  return attr.ok() && H5Awrite(attr.get(), type, &value) >= 0;
}

template <class T>
bool read_attr(hid_t obj, const char* name, hid_t type, T* value) {
  if (H5Aexists(obj, name) <= 0) return false;
  H5Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  return attr.ok() && H5Aread(attr.get(), type, value) >= 0;
}

std::string id_stem(const std::string& dir, const ObjectId& id) {
  return dir + "/" + std::to_string(id.owner) + "_" + std::to_string(id.kind) + "_" +
         std::to_string(id.seq);
}

}  // namespace

std::string spill_path(const std::string& dir, const ObjectId& id) {
  return id_stem(dir, id) + ".h5";
}
std::string fallback_path(const std::string& dir, const ObjectId& id) {
  return id_stem(dir, id) + ".fallback";
}

void write_spill_file(const std::string& path, const ObjectId& id, std::span<const std::byte> data,
                      bool* disk_full) {
  init_hdf5_once();
  *disk_full = false;
  const std::string tmp = path + ".tmp";
  auto io_fail = [&](const std::string& what) {
    const int err = errno;
    *disk_full = err == ENOSPC || err == EFBIG || err == EDQUOT;
    ::unlink(tmp.c_str());
    fail(what + (err != 0 ? std::string(": ") + std::strerror(err) : std::string()), path, id,
         data.size());
  };
  errno = 0;
  H5Id fapl = file_access();
  H5Id file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
  if (!file.ok()) io_fail("cannot create spill file");
  const hsize_t dims = data.size();
  H5Id fspace(H5Screate_simple(1, &dims, nullptr), H5Sclose);
  H5Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS);
  // Early allocation fixes the data's place in the file now, so we can write it ourselves;
  // no fill: every byte is written once, by us.
  H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER);
  H5Id dset(H5Dcreate2(file.get(), "data", H5T_STD_U8LE, fspace.get(), H5P_DEFAULT, dcpl.get(),
                       H5P_DEFAULT),
            H5Dclose);
  if (!dset.ok()) io_fail("cannot create dataset");
  const uint64_t size = data.size(), seq = id.seq;
  const int32_t owner = id.owner;
  const uint32_t kind = id.kind;
  if (!write_attr(dset.get(), "object_owner", H5T_NATIVE_INT32, owner) ||
      !write_attr(dset.get(), "object_kind", H5T_NATIVE_UINT32, kind) ||
      !write_attr(dset.get(), "object_seq", H5T_NATIVE_UINT64, seq) ||
      !write_attr(dset.get(), "size", H5T_NATIVE_UINT64, size) ||
      !write_attr(dset.get(), "checksum", H5T_NATIVE_UINT64, uint64_t{0})) {
    io_fail("cannot write attributes");
  }
  Checksum sum;
  // Large objects are checksummed by a helper thread while this one writes: with a core free the
  // spill then runs at write() speed (measured: 100 % vs 82–87 % for the checksum inline before
  // each slab). The jthread joins on every way out, errors included, before `data` may go.
  const bool helper = size >= kHelperChecksumMin;
  std::jthread summer;
  if (helper) summer = std::jthread([&sum, data] { sum.update(data); });
  if (size > 0) {
    const haddr_t at = H5Dget_offset(dset.get());
    if (at == HADDR_UNDEF) io_fail("dataset has no file offset (not contiguous)");
    errno = 0;
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0) io_fail("cannot open for the data");
    for (uint64_t off = 0; off < size; off += kSlab) {
      const uint64_t n = std::min<uint64_t>(kSlab, size - off);
      if (!helper) sum.update(data.subspan(off, n));
      errno = 0;
      if (!pwrite_all(fd.get(), data.data() + off, n, at + off)) {
        io_fail("write of " + std::to_string(n) + " bytes at offset " + std::to_string(off) +
                " failed");
      }
    }
    errno = 0;
    if (!fd.close()) io_fail("close of the data failed");
  }
  if (summer.joinable()) summer.join();
  errno = 0;
  if (!update_attr(dset.get(), "checksum", H5T_NATIVE_UINT64, sum.finish())) {
    io_fail("cannot write the checksum attribute");
  }
  if (!dset.release() || !fspace.release() || !file.release()) io_fail("close (flush) failed");
  if (::rename(tmp.c_str(), path.c_str()) != 0) io_fail("rename from " + tmp + " failed");
}

void read_spill_file(const std::string& path, const ObjectId& id, std::span<std::byte> out) {
  init_hdf5_once();
  const uint64_t want = out.size();
  if (::access(path.c_str(), F_OK) != 0) fail("spill file is missing", path, id, want);
  {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
      fail(std::string("cannot open spill file: ") + std::strerror(errno), path, id, want);
    }
    const std::string why = check_superblock(fd.get());
    if (!why.empty()) fail(why, path, id, want);
  }
  H5Id fapl = file_access();
  H5Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.ok()) fail("spill file is corrupted or not an HDF5 file", path, id, want);
  H5Id dset(H5Dopen2(file.get(), "data", H5P_DEFAULT), H5Dclose);
  if (!dset.ok()) fail("spill file has no 'data' dataset", path, id, want);
  int32_t owner = -1;
  uint32_t kind = 0;
  uint64_t seq = 0, size = 0, check = 0;
  if (!read_attr(dset.get(), "object_owner", H5T_NATIVE_INT32, &owner) ||
      !read_attr(dset.get(), "object_kind", H5T_NATIVE_UINT32, &kind) ||
      !read_attr(dset.get(), "object_seq", H5T_NATIVE_UINT64, &seq) ||
      !read_attr(dset.get(), "size", H5T_NATIVE_UINT64, &size) ||
      !read_attr(dset.get(), "checksum", H5T_NATIVE_UINT64, &check)) {
    fail("spill file attributes are missing or unreadable", path, id, want);
  }
  if (ObjectId{owner, kind, seq} != id) {
    fail("spill file holds " + ObjectId{owner, kind, seq}.str() + " instead", path, id, want);
  }
  H5Id fspace(H5Dget_space(dset.get()), H5Sclose);
  hsize_t dims = 0;
  if (!fspace.ok() || H5Sget_simple_extent_ndims(fspace.get()) != 1 ||
      H5Sget_simple_extent_dims(fspace.get(), &dims, nullptr) < 0 || dims != size || size != want) {
    fail("spill file size mismatch: dataset " + std::to_string(dims) + " bytes, attribute " +
             std::to_string(size) + ", expected " + std::to_string(want),
         path, id, want);
  }
  if (size == 0) return;
  const haddr_t at = H5Dget_offset(dset.get());
  if (at == HADDR_UNDEF) fail("spill file's dataset is not contiguous", path, id, want);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) {
    fail(std::string("cannot open spill file: ") + std::strerror(errno), path, id, want);
  }
  if (static_cast<uint64_t>(st.st_size) < size || at > static_cast<uint64_t>(st.st_size) - size) {
    fail("spill file is truncated: " + std::to_string(st.st_size) + " bytes on disk, the data " +
             "ends at " + std::to_string(at + size),
         path, id, want);
  }
  // The bytes come through a mapping of the page cache, copied and checksummed in one pass:
  // read() into the object and then a checksum pass read them twice (measured here: ~72 % of
  // plain read() for that, ~100 % for the fused pass). Windows bound the page tables, and
  // MAP_POPULATE maps each in one call rather than a fault per page. The size check above keeps
  // the mapping inside the file (a file truncated during a restore would raise SIGBUS; spill
  // files belong to the store alone).
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  Checksum sum;
  for (uint64_t off = 0; off < size; off += kMapWindow) {
    const uint64_t n = std::min<uint64_t>(kMapWindow, size - off);
    const uint64_t lead = (at + off) % page;
    void* m = ::mmap(nullptr, lead + n, PROT_READ, MAP_SHARED | MAP_POPULATE, fd.get(),
                     static_cast<off_t>(at + off - lead));
    if (m == MAP_FAILED) {  // a file system without mmap: read, then checksum while in cache
      for (uint64_t k = 0; k < n; k += kSlab) {
        const uint64_t len = std::min<uint64_t>(kSlab, n - k);
        errno = 0;
        if (!pread_all(fd.get(), out.data() + off + k, len, at + off + k)) {
          fail("read of " + std::to_string(len) + " bytes at offset " + std::to_string(off + k) +
                   " failed" + (errno != 0 ? std::string(": ") + std::strerror(errno) : ""),
               path, id, want);
        }
        sum.update(out.subspan(off + k, len));
      }
      continue;
    }
    const Mapping window(m, lead + n);
    sum.copy_and_update(std::span(static_cast<const std::byte*>(m) + lead, n), out.data() + off);
  }
  if (sum.finish() != check) {
    fail("checksum mismatch over " + std::to_string(size) + " bytes: the spill file is corrupted",
         path, id, want);
  }
}

}  // namespace weft::store
