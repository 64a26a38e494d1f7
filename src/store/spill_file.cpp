#include "store/spill_file.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "store/checksum.hpp"
#include "weft/errors.hpp"

namespace weft::store {
namespace {

// HDF5 I/O in slabs: bounded per-call sizes (HDF5 1.10 and some file systems misbehave with
// single multi-GiB requests) and a checksum computed while the slab is still in cache.
constexpr uint64_t kSlab = 8ull << 20;

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
  // Raw data goes straight from the object to the file: no sieve-buffer copy.
  H5Pset_sieve_buf_size(fapl.get(), 0);
  return fapl;
}

[[noreturn]] void fail(const std::string& what, const std::string& path, const ObjectId& id) {
  throw SpillError("object store: " + what + " (spill file " + path + ", object " + id.str() + ")");
}

template <class T>
bool write_attr(hid_t obj, const char* name, hid_t type, T value) {
  H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Id attr(H5Acreate2(obj, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return attr.ok() && H5Awrite(attr.get(), type, &value) >= 0;
}

template <class T>
bool read_attr(hid_t obj, const char* name, hid_t type, T* value) {
  if (H5Aexists(obj, name) <= 0) return false;
  H5Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  return attr.ok() && H5Aread(attr.get(), type, value) >= 0;
}

// Selects bytes [off, off+n) of the 1-D dataset; returns the file and memory spaces.
bool select_slab(hid_t fspace, uint64_t off, uint64_t n, H5Id* mspace) {
  hsize_t start = off, count = n;
  if (H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, nullptr, &count, nullptr) < 0) {
    return false;
  }
  *mspace = H5Id(H5Screate_simple(1, &count, nullptr), H5Sclose);
  return mspace->ok();
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
    fail(what + (err != 0 ? std::string(": ") + std::strerror(err) : std::string()), path, id);
  };
  errno = 0;
  H5Id fapl = file_access();
  H5Id file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
  if (!file.ok()) io_fail("cannot create spill file");
  const hsize_t dims = data.size();
  H5Id fspace(H5Screate_simple(1, &dims, nullptr), H5Sclose);
  H5Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS);
  H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER);  // every byte is written once, by us
  H5Id dset(H5Dcreate2(file.get(), "data", H5T_STD_U8LE, fspace.get(), H5P_DEFAULT, dcpl.get(),
                       H5P_DEFAULT),
            H5Dclose);
  if (!dset.ok()) io_fail("cannot create dataset");
  Checksum sum;
  for (uint64_t off = 0; off < data.size(); off += kSlab) {
    const uint64_t n = std::min<uint64_t>(kSlab, data.size() - off);
    sum.update(data.subspan(off, n));
    H5Id mspace(-1, H5Sclose);
    errno = 0;
    if (!select_slab(fspace.get(), off, n, &mspace) ||
        H5Dwrite(dset.get(), H5T_NATIVE_UCHAR, mspace.get(), fspace.get(), H5P_DEFAULT,
                 data.data() + off) < 0) {
      io_fail("write of " + std::to_string(n) + " bytes at offset " + std::to_string(off) +
              " failed");
    }
  }
  const uint64_t size = data.size(), seq = id.seq, check = sum.finish();
  const int32_t owner = id.owner;
  const uint32_t kind = id.kind;
  if (!write_attr(dset.get(), "object_owner", H5T_NATIVE_INT32, owner) ||
      !write_attr(dset.get(), "object_kind", H5T_NATIVE_UINT32, kind) ||
      !write_attr(dset.get(), "object_seq", H5T_NATIVE_UINT64, seq) ||
      !write_attr(dset.get(), "size", H5T_NATIVE_UINT64, size) ||
      !write_attr(dset.get(), "checksum", H5T_NATIVE_UINT64, check)) {
    io_fail("cannot write attributes");
  }
  errno = 0;
  if (!dset.release() || !fspace.release() || !file.release()) io_fail("close (flush) failed");
  if (::rename(tmp.c_str(), path.c_str()) != 0) io_fail("rename from " + tmp + " failed");
}

void read_spill_file(const std::string& path, const ObjectId& id, std::span<std::byte> out) {
  init_hdf5_once();
  if (::access(path.c_str(), F_OK) != 0) fail("spill file is missing", path, id);
  H5Id fapl = file_access();
  H5Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!file.ok()) fail("spill file is corrupted or not an HDF5 file", path, id);
  H5Id dset(H5Dopen2(file.get(), "data", H5P_DEFAULT), H5Dclose);
  if (!dset.ok()) fail("spill file has no 'data' dataset", path, id);
  int32_t owner = -1;
  uint32_t kind = 0;
  uint64_t seq = 0, size = 0, check = 0;
  if (!read_attr(dset.get(), "object_owner", H5T_NATIVE_INT32, &owner) ||
      !read_attr(dset.get(), "object_kind", H5T_NATIVE_UINT32, &kind) ||
      !read_attr(dset.get(), "object_seq", H5T_NATIVE_UINT64, &seq) ||
      !read_attr(dset.get(), "size", H5T_NATIVE_UINT64, &size) ||
      !read_attr(dset.get(), "checksum", H5T_NATIVE_UINT64, &check)) {
    fail("spill file attributes are missing or unreadable", path, id);
  }
  if (ObjectId{owner, kind, seq} != id) {
    fail("spill file holds " + ObjectId{owner, kind, seq}.str() + " instead", path, id);
  }
  H5Id fspace(H5Dget_space(dset.get()), H5Sclose);
  hsize_t dims = 0;
  if (!fspace.ok() || H5Sget_simple_extent_ndims(fspace.get()) != 1 ||
      H5Sget_simple_extent_dims(fspace.get(), &dims, nullptr) < 0 || dims != size ||
      size != out.size()) {
    fail("spill file size mismatch: dataset " + std::to_string(dims) + " bytes, attribute " +
             std::to_string(size) + ", expected " + std::to_string(out.size()),
         path, id);
  }
  Checksum sum;
  for (uint64_t off = 0; off < size; off += kSlab) {
    const uint64_t n = std::min<uint64_t>(kSlab, size - off);
    H5Id mspace(-1, H5Sclose);
    if (!select_slab(fspace.get(), off, n, &mspace) ||
        H5Dread(dset.get(), H5T_NATIVE_UCHAR, mspace.get(), fspace.get(), H5P_DEFAULT,
                out.data() + off) < 0) {
      fail("read of " + std::to_string(n) + " bytes at offset " + std::to_string(off) +
               " failed (truncated or corrupted file)",
           path, id);
    }
    sum.update(out.subspan(off, n));
  }
  if (sum.finish() != check) fail("checksum mismatch: the spill file is corrupted", path, id);
}

}  // namespace weft::store
