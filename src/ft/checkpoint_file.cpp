#include "ft/checkpoint_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/shm_mapping.hpp"
#include "ft/hdf5_handle.hpp"
#include "store/checksum.hpp"
#include "weft/errors.hpp"

namespace weft::ft {
namespace {

using Kind = CheckpointError::Kind;

constexpr uint32_t kFormatVersion = 1;
constexpr const char* kStateDataset = "state";
constexpr const char* kFormatAttr = "weft_checkpoint_format";
// Class names and build ids are short; the bound keeps a damaged length from becoming an
// allocation, and keeps every attribute in the root group's (checksummed) object header.
constexpr size_t kMaxString = 4096;
// The state moves in slabs this large (see for_each_slab).
constexpr uint64_t kSlab = uint64_t(1) << 20;
constexpr char kHdf5Signature[8] = {'\211', 'H', 'D', 'F', '\r', '\n', '\032', '\n'};

constexpr const char* kAdviceWrite =
    "Check that the checkpoint directory exists and is writable; the previous checkpoint, if "
    "any, is unchanged";
constexpr const char* kAdviceFull =
    "Free space (or quota) on that file system or point the checkpoint directory elsewhere; the "
    "previous checkpoint, if any, is unchanged";
constexpr const char* kAdviceDamaged =
    "The file was damaged after it was written (Weft renames only complete checkpoints into "
    "place); restore it from a copy, or delete it to start the actor from its constructor";
constexpr const char* kAdviceForeign =
    "Check the checkpoint directory and the actor's name, or delete the file to start the actor "
    "from its constructor";
constexpr const char* kAdviceBuild =
    "Restore it with the build that wrote it, or delete it to start the actor from its "
    "constructor";

[[noreturn]] void fail(Kind kind, const std::string& file, const std::string& reason,
                       const char* advice) {
  throw CheckpointError(kind, file, reason, advice);
}

// HDF5's POSIX driver reports the failed call's errno inside its message ("errno = 28, error
// message = 'No space left on device'"); that survives where the thread's errno may have been
// overwritten by HDF5's own cleanup.
int errno_in(const std::string& hdf5_error) {
  const size_t at = hdf5_error.find("errno = ");
  return at == std::string::npos ? 0 : std::atoi(hdf5_error.c_str() + at + 8);
}

bool is_disk_full(int err) { return err == ENOSPC || err == EDQUOT || err == EFBIG; }

// A write step failed: the reason names the step and the system's reason (errno text), or HDF5's
// innermost message when there was no errno. `thread_errno` is errno right after the step (reset
// before it); an errno inside HDF5's message wins, as HDF5 may have set errno on its way out.
[[noreturn]] void write_failed(const std::string& file, const std::string& step, int thread_errno) {
  const std::string hdf5 = QuietHdf5::take_error();
  int err = errno_in(hdf5);
  if (err == 0) err = thread_errno;
  std::string reason = "cannot write the checkpoint: " + step + " failed";
  if (err != 0) {
    reason += ": " + std::string(std::strerror(err));
  } else if (!hdf5.empty()) {
    reason += " (HDF5: " + hdf5 + ")";
  }
  if (is_disk_full(err)) fail(Kind::kDiskFull, file, reason, kAdviceFull);
  fail(Kind::kWriteFailed, file, reason, kAdviceWrite);
}

// Removes the temporary on every way out unless the rename consumed it.
struct TempFile {
  std::string path;
  bool keep = false;
  ~TempFile() {
    if (!keep) ::unlink(path.c_str());
  }
};

// `<file>.tmp.<host>.<pid>.<n>`: unique among live writers even on a file system that several
// hosts share, so an existing file of that name can only be a leftover of a dead process that
// had our pid on our host.
std::string temp_path(const std::string& file) {
  static std::atomic<uint64_t> n{0};
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "host");
  for (char* c = host; *c != '\0'; ++c) {
    if (*c == '/') *c = '_';
  }
  return file + ".tmp." + host + "." + std::to_string(::getpid()) + "." + std::to_string(n++);
}

H5Handle file_access() {
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok()) return fapl;
  // Checkpoint directories are often on network or parallel file systems, where POSIX locks add
  // failure modes and buy nothing: writers use private temporaries, readers see renamed files.
  H5Pset_file_locking(fapl.get(), false, true);
  // The 1.8+ format checksums the superblock and every object header (the attributes live
  // there), so damaged metadata fails at open instead of reading back as a wrong class or seq.
  H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  return fapl;
}

bool write_u64(hid_t obj, const char* name, uint64_t v) {
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle attr(H5Acreate2(obj, name, H5T_STD_U64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  return attr.ok() && H5Awrite(attr.get(), H5T_NATIVE_UINT64, &v) >= 0;
}

bool write_string(hid_t obj, const char* name, const std::string& s) {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!type.ok() || H5Tset_size(type.get(), s.size() + 1) < 0 ||
      H5Tset_strpad(type.get(), H5T_STR_NULLTERM) < 0) {
    return false;
  }
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle attr(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return attr.ok() && H5Awrite(attr.get(), type.get(), s.c_str()) >= 0;
}

// Calls fn(memory space, file selection, offset, length) for each slab of the 1-D byte dataset
// `dset` in order; false if HDF5 could not make the selections, or fn's false. Slabs keep the
// checksum's pass over each in cache right beside the copy HDF5 makes of it, and their size is a
// multiple of Checksum::kStripe, as every update but the last must be.
template <class Fn>
bool for_each_slab(hid_t dset, uint64_t size, Fn&& fn) {
  static_assert(kSlab % store::Checksum::kStripe == 0);
  if (size == 0) return true;
  H5Handle fspace(H5Dget_space(dset), H5Sclose);
  if (!fspace.ok()) return false;
  for (uint64_t off = 0; off < size; off += kSlab) {
    const hsize_t start = off, count = std::min<uint64_t>(kSlab, size - off);
    H5Handle mem(H5Screate_simple(1, &count, nullptr), H5Sclose);
    if (!mem.ok() ||
        H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr) < 0) {
      return false;
    }
    if (!fn(mem.get(), fspace.get(), off, count)) return false;
  }
  return true;
}

// Hands out the concatenation of `parts` in consecutive slabs: a slab inside one part is a view
// of it; only a slab that spans parts is copied, into a buffer of its own.
class SlabGather {
 public:
  explicit SlabGather(std::span<const std::span<const char>> parts) : parts_(parts) {}
  std::span<const char> next(uint64_t n) {
    skip_empty();
    if (part_ < parts_.size() && parts_[part_].size() - at_ >= n) {
      const auto out = parts_[part_].subspan(at_, n);
      at_ += n;
      return out;
    }
    staging_.resize(n);
    for (uint64_t got = 0; got < n;) {
      skip_empty();
      const auto& p = parts_[part_];
      const uint64_t k = std::min<uint64_t>(n - got, p.size() - at_);
      std::memcpy(staging_.data() + got, p.data() + at_, k);
      got += k;
      at_ += k;
    }
    return {staging_.data(), n};
  }

 private:
  void skip_empty() {
    while (part_ < parts_.size() && at_ == parts_[part_].size()) ++part_, at_ = 0;
  }
  std::span<const std::span<const char>> parts_;
  size_t part_ = 0;
  uint64_t at_ = 0;
  std::vector<char> staging_;
};

bool fsync_path(const std::string& path, int flags) {
  UniqueFd fd(::open(path.c_str(), flags | O_CLOEXEC));
  if (fd.get() < 0 || ::fsync(fd.get()) != 0) return false;
  return fd.close();
}

// ---- reading -------------------------------------------------------------------------------

// The attributes of one open file, each read with its type and size checked first.
class AttributeReader {
 public:
  AttributeReader(hid_t obj, const std::string& file) : obj_(obj), file_(file) {}

  uint64_t u64(const char* name) const {
    H5Handle attr = open(name);
    H5Handle type(H5Aget_type(attr.get()), H5Tclose);
    if (!type.ok() || H5Tget_class(type.get()) != H5T_INTEGER || H5Tget_size(type.get()) != 8 ||
        !scalar(attr.get())) {
      malformed(name, "is not a 64-bit integer");
    }
    uint64_t v = 0;
    if (H5Aread(attr.get(), H5T_NATIVE_UINT64, &v) < 0) malformed(name, "cannot be read");
    return v;
  }

  std::string str(const char* name) const {
    H5Handle attr = open(name);
    H5Handle type(H5Aget_type(attr.get()), H5Tclose);
    if (!type.ok() || H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) ||
        !scalar(attr.get())) {
      malformed(name, "is not a fixed-length string");
    }
    const size_t n = H5Tget_size(type.get());
    if (n == 0 || n > kMaxString + 1) {
      malformed(name, "is " + std::to_string(n) + " bytes long (at most " +
                          std::to_string(kMaxString + 1) + " expected)");
    }
    std::string s(n, '\0');
    if (H5Aread(attr.get(), type.get(), s.data()) < 0) malformed(name, "cannot be read");
    s.resize(::strnlen(s.c_str(), n));
    return s;
  }

 private:
  H5Handle open(const char* name) const {
    const htri_t exists = H5Aexists(obj_, name);
    if (exists < 0) {
      fail(Kind::kDamaged, file_,
           std::string("HDF5 cannot list its attributes (") + QuietHdf5::take_error() + ")",
           kAdviceDamaged);
    }
    if (exists == 0) {
      fail(Kind::kMissingAttribute, file_,
           std::string("it has no '") + name + "' attribute: not a complete Weft checkpoint",
           kAdviceDamaged);
    }
    H5Handle attr(H5Aopen(obj_, name, H5P_DEFAULT), H5Aclose);
    if (!attr.ok()) malformed(name, "cannot be opened");
    return attr;
  }
  static bool scalar(hid_t attr) {
    H5Handle space(H5Aget_space(attr), H5Sclose);
    return space.ok() && H5Sget_simple_extent_type(space.get()) == H5S_SCALAR;
  }
  [[noreturn]] void malformed(const char* name, const std::string& what) const {
    fail(Kind::kMissingAttribute, file_, std::string("its '") + name + "' attribute " + what,
         kAdviceDamaged);
  }

  hid_t obj_;
  const std::string& file_;
};

}  // namespace

std::filesystem::path checkpoint_path(const std::filesystem::path& dir,
                                      std::string_view actor_key) {
  if (actor_key.empty()) throw std::invalid_argument("checkpoint_path: empty actor key");
  std::string name;
  name.reserve(actor_key.size() + 8);
  for (const char c : actor_key) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '_' ||
        u == '-') {
      name += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", u);
      name += hex;
    }
  }
  return dir / (name + ".ckpt.h5");
}

void write_checkpoint(const std::filesystem::path& file_path, const CheckpointHeader& header,
                      std::span<const char> state) {
  const std::span<const char> parts[1] = {state};
  write_checkpoint(file_path, header, std::span<const std::span<const char>>(parts));
}

void write_checkpoint(const std::filesystem::path& file_path, const CheckpointHeader& header,
                      std::span<const std::span<const char>> state) {
  const std::string file = file_path.string();
  for (const auto* s : {&header.class_name, &header.build_id}) {
    if (s->size() > kMaxString) {
      fail(Kind::kWriteFailed, file,
           "cannot write the checkpoint: a class name or build id of " + std::to_string(s->size()) +
               " bytes is longer than the " + std::to_string(kMaxString) + " allowed",
           "Use a shorter name");
    }
  }
  QuietHdf5 quiet;
  TempFile tmp{temp_path(file)};  // declared before the handles: they close before it unlinks
  uint64_t size = 0;
  for (const auto& part : state) size += part.size();

  errno = 0;
  H5Handle fapl = file_access();
  if (!fapl.ok()) write_failed(file, "setting up HDF5", errno);
  ::unlink(tmp.path.c_str());  // a dead namesake's leftover (see temp_path)
  errno = 0;
  H5Handle h5(H5Fcreate(tmp.path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()), H5Fclose);
  if (!h5.ok()) write_failed(file, "creating the temporary " + tmp.path, errno);

  errno = 0;
  H5Handle root(H5Gopen2(h5.get(), "/", H5P_DEFAULT), H5Gclose);
  if (!root.ok() || !write_u64(root.get(), kFormatAttr, kFormatVersion) ||
      !write_string(root.get(), "class_name", header.class_name) ||
      !write_string(root.get(), "build_id", header.build_id) ||
      !write_u64(root.get(), "seq", header.seq) || !write_u64(root.get(), "size", size)) {
    write_failed(file, "writing the attributes", errno);
  }

  // One contiguous dataset, allocated at creation and never filled: HDF5 then writes the state
  // straight from the caller's buffer, in one pass.
  const hsize_t dims = size;
  H5Handle space(H5Screate_simple(1, &dims, nullptr), H5Sclose);
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!space.ok() || !dcpl.ok() || H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS) < 0 ||
      H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY) < 0 ||
      H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER) < 0) {
    write_failed(file, "setting up the state dataset", errno);
  }
  errno = 0;
  H5Handle dset(H5Dcreate2(h5.get(), kStateDataset, H5T_STD_U8LE, space.get(), H5P_DEFAULT,
                           dcpl.get(), H5P_DEFAULT),
                H5Dclose);
  if (!dset.ok()) write_failed(file, "creating the state dataset", errno);
  store::Checksum sum;
  SlabGather gather(state);
  const bool ok =
      for_each_slab(dset.get(), size, [&](hid_t mem, hid_t fsel, uint64_t off, uint64_t n) {
        const auto slab = std::as_bytes(gather.next(n));
        sum.update(slab);  // just before the write, so the write finds the slab in cache
        errno = 0;
        if (H5Dwrite(dset.get(), H5T_NATIVE_UCHAR, mem, fsel, H5P_DEFAULT, slab.data()) >= 0) {
          return true;
        }
        write_failed(
            file, "writing " + std::to_string(n) + " state bytes at offset " + std::to_string(off),
            errno);
      });
  errno = 0;
  if (!ok) write_failed(file, "selecting the state's slabs", errno);
  errno = 0;
  if (!write_u64(root.get(), "checksum", sum.finish())) {
    write_failed(file, "writing the checksum attribute", errno);
  }
  errno = 0;
  if (H5Fflush(h5.get(), H5F_SCOPE_LOCAL) < 0) write_failed(file, "flushing HDF5", errno);
  // Closing writes HDF5's last metadata (and trims the file to its end), so the fsync comes
  // after the close, through a descriptor of our own.
  errno = 0;
  if (!dset.close() || !space.close() || !root.close() || !h5.close()) {
    write_failed(file, "closing the temporary", errno);
  }
  errno = 0;
  if (!fsync_path(tmp.path, O_RDONLY)) write_failed(file, "fsync of the temporary", errno);
  errno = 0;
  if (::rename(tmp.path.c_str(), file.c_str()) != 0) {
    write_failed(file, "renaming " + tmp.path + " into place", errno);
  }
  tmp.keep = true;
  // The rename is durable only once the directory entry is: without this a crash could bring
  // back the previous checkpoint after we reported this one as written.
  const std::filesystem::path parent = file_path.parent_path();
  errno = 0;
  if (!fsync_path(parent.empty() ? "." : parent.string(), O_RDONLY | O_DIRECTORY)) {
    write_failed(file, "fsync of the directory " + parent.string(), errno);
  }
}

Checkpoint read_checkpoint(const std::filesystem::path& file_path, std::string_view expected_class,
                           std::string_view expected_build) {
  const std::string file = file_path.string();
  QuietHdf5 quiet;

  // Before HDF5 sees it: does it exist, how large is it, is it HDF5 at all.
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      fail(Kind::kMissing, file, "no checkpoint file exists there",
           "No checkpoint was written for this actor in this directory; check the checkpoint "
           "directory and the actor's name");
    }
    fail(Kind::kDamaged, file, std::string("cannot open it: ") + std::strerror(err),
         "Check the file's permissions");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    fail(Kind::kNotHdf5, file, "it is not a regular file", kAdviceForeign);
  }
  uint64_t file_size = static_cast<uint64_t>(st.st_size);
  char head[sizeof kHdf5Signature + 1] = {};  // and the superblock version after it
  const ssize_t got = ::pread(fd.get(), head, sizeof head, 0);
  if (got != static_cast<ssize_t>(sizeof head) ||
      std::memcmp(head, kHdf5Signature, sizeof kHdf5Signature) != 0) {
    fail(Kind::kNotHdf5, file,
         "it is not an HDF5 file (it does not start with HDF5's signature; " +
             std::to_string(file_size) + " bytes)",
         kAdviceForeign);
  }
  // Versions 0 and 1 carry no checksums, and HDF5 1.10 trusts the sizes it reads there (a
  // flipped byte in a spill file of that format made it ask for 47 TB: tests/fuzz). Weft writes
  // version 2 or later (file_access), so an older one is not a Weft checkpoint.
  const auto superblock = static_cast<unsigned char>(head[sizeof kHdf5Signature]);
  if (superblock < 2) {
    fail(Kind::kNotHdf5, file,
         "it has HDF5 superblock version " + std::to_string(superblock) +
             ", without checksums; Weft writes version 2 or later",
         kAdviceForeign);
  }
  fd.close();

  H5Handle fapl = file_access();
  H5Handle h5(H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!h5.ok()) {
    const std::string why = QuietHdf5::take_error();
    if (why.find("truncated") != std::string::npos) {
      fail(Kind::kTruncated, file,
           "it is truncated: the file has " + std::to_string(file_size) +
               " bytes, fewer than HDF5 wrote (HDF5: " + why + ")",
           kAdviceDamaged);
    }
    fail(Kind::kDamaged, file, "HDF5 cannot open it (" + why + ")", kAdviceDamaged);
  }
  // The size of the file HDF5 opened (a writer may have renamed a newer one in since fstat).
  hsize_t opened_size = 0;
  if (H5Fget_filesize(h5.get(), &opened_size) >= 0) file_size = opened_size;
  H5Handle root(H5Gopen2(h5.get(), "/", H5P_DEFAULT), H5Gclose);
  if (!root.ok()) {
    fail(Kind::kDamaged, file, "HDF5 cannot open its root group (" + QuietHdf5::take_error() + ")",
         kAdviceDamaged);
  }
  const AttributeReader attrs(root.get(), file);
  const uint64_t format = attrs.u64(kFormatAttr);
  if (format != kFormatVersion) {
    fail(Kind::kWrongBuild, file,
         "it has checkpoint format " + std::to_string(format) + ", this build reads format " +
             std::to_string(kFormatVersion),
         kAdviceBuild);
  }
  Checkpoint out;
  out.header.class_name = attrs.str("class_name");
  out.header.build_id = attrs.str("build_id");
  out.header.seq = attrs.u64("seq");
  const uint64_t size = attrs.u64("size");
  const uint64_t sum = attrs.u64("checksum");
  if (out.header.class_name != expected_class) {
    fail(Kind::kWrongClass, file,
         "it holds a checkpoint of actor class '" + out.header.class_name + "', not of '" +
             std::string(expected_class) + "'",
         kAdviceForeign);
  }
  if (out.header.build_id != expected_build) {
    fail(Kind::kWrongBuild, file,
         "it was written by build '" + out.header.build_id + "', this is build '" +
             std::string(expected_build) + "'",
         kAdviceBuild);
  }

  if (H5Lexists(root.get(), kStateDataset, H5P_DEFAULT) <= 0) {
    fail(Kind::kMissingAttribute, file, "it has no 'state' dataset", kAdviceDamaged);
  }
  H5Handle dset(H5Dopen2(root.get(), kStateDataset, H5P_DEFAULT), H5Dclose);
  if (!dset.ok()) {
    fail(Kind::kDamaged, file,
         "HDF5 cannot open its 'state' dataset (" + QuietHdf5::take_error() + ")", kAdviceDamaged);
  }
  H5Handle type(H5Dget_type(dset.get()), H5Tclose);
  H5Handle space(H5Dget_space(dset.get()), H5Sclose);
  hsize_t dims = 0;
  if (!type.ok() || H5Tget_class(type.get()) != H5T_INTEGER || H5Tget_size(type.get()) != 1 ||
      !space.ok() || H5Sget_simple_extent_ndims(space.get()) != 1 ||
      H5Sget_simple_extent_dims(space.get(), &dims, nullptr) != 1) {
    fail(Kind::kMissingAttribute, file, "its 'state' dataset is not a 1-D array of bytes",
         kAdviceDamaged);
  }
  if (dims != size) {
    fail(Kind::kCorrupted, file,
         "its 'state' dataset holds " + std::to_string(dims) + " bytes, its 'size' attribute " +
             std::to_string(size),
         kAdviceDamaged);
  }
  // The size comes from the file: bound it by the file before allocating anything for it.
  const haddr_t at = H5Dget_offset(dset.get());
  if (size > file_size || (size > 0 && (at == HADDR_UNDEF || at > file_size - size))) {
    fail(Kind::kTruncated, file,
         "its state of " + std::to_string(size) + " bytes does not fit in the file's " +
             std::to_string(file_size) + " bytes",
         kAdviceDamaged);
  }
  out.state.resize(size);
  store::Checksum summer;
  const bool ok =
      for_each_slab(dset.get(), size, [&](hid_t mem, hid_t fsel, uint64_t off, uint64_t n) {
        char* slab = out.state.data() + off;
        if (H5Dread(dset.get(), H5T_NATIVE_UCHAR, mem, fsel, H5P_DEFAULT, slab) < 0) {
          fail(Kind::kDamaged, file,
               "HDF5 cannot read its state bytes at offset " + std::to_string(off) + " (" +
                   QuietHdf5::take_error() + ")",
               kAdviceDamaged);
        }
        summer.update(std::as_bytes(std::span<const char>(slab, n)));  // while in cache
        return true;
      });
  if (!ok) {
    fail(Kind::kDamaged, file,
         "HDF5 cannot select its state's slabs (" + QuietHdf5::take_error() + ")", kAdviceDamaged);
  }
  const uint64_t computed = summer.finish();
  if (computed != sum) {
    char detail[96];
    std::snprintf(detail, sizeof detail, " (stored %016llx, computed %016llx)",
                  static_cast<unsigned long long>(sum), static_cast<unsigned long long>(computed));
    fail(Kind::kCorrupted, file,
         "checksum mismatch over its " + std::to_string(size) +
             " state bytes: the state is corrupted" + detail,
         kAdviceDamaged);
  }
  return out;
}

size_t remove_checkpoint_temporaries(const std::filesystem::path& file) {
  const std::string prefix = file.filename().string() + ".tmp.";
  const std::filesystem::path parent = file.parent_path().empty() ? "." : file.parent_path();
  size_t removed = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(parent, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) {
      std::error_code rm;
      if (std::filesystem::remove(it->path(), rm)) ++removed;
    }
  }
  return removed;
}

}  // namespace weft::ft
