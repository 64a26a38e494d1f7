#include "store/mapping.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "weft/errors.hpp"

namespace weft::store {
namespace {

std::string errno_text(int err) { return std::string(std::strerror(err)); }

// Owns a file descriptor for the few lines between open and mmap.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string shm_path(const std::string& name) { return name.starts_with("/") ? name : "/" + name; }

Mapping map_fd(int fd, size_t size, int prot, const std::string& what) {
  if (size == 0) return Mapping(nullptr, 0);
  void* p = ::mmap(nullptr, size, prot, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    throw Error("object store: mmap of " + what + " (" + std::to_string(size) +
                " bytes) failed: " + errno_text(errno));
  }
  return Mapping(p, size);
}

}  // namespace

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    reset();
    addr_ = std::exchange(o.addr_, nullptr);
    size_ = o.size_;
  }
  return *this;
}

void Mapping::reset() {
  if (addr_ != nullptr) ::munmap(addr_, size_);
  addr_ = nullptr;
  size_ = 0;
}

Mapping shm_create(const std::string& name, size_t size) {
  const std::string path = shm_path(name);
  Fd fd(::shm_open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
  if (fd.get() < 0) {
    throw Error("object store: cannot create shared-memory segment " + path + ": " +
                errno_text(errno) +
                (errno == EEXIST ? " (another store uses this name; names must be unique per "
                                   "job and node)"
                                 : ""));
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
    int err = errno;
    ::shm_unlink(path.c_str());
    throw Error("object store: cannot size shared-memory segment " + path + " to " +
                std::to_string(size) + " bytes: " + errno_text(err));
  }
  try {
    return map_fd(fd.get(), size, PROT_READ | PROT_WRITE, "segment " + path);
  } catch (...) {
    ::shm_unlink(path.c_str());
    throw;
  }
}

Mapping shm_open_existing(const std::string& name) {
  const std::string path = shm_path(name);
  Fd fd(::shm_open(path.c_str(), O_RDWR, 0600));
  if (fd.get() < 0) {
    throw Error("object store: cannot attach to shared-memory segment " + path + ": " +
                errno_text(errno) + " (was NodeStore::create called on this node first?)");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw Error("object store: fstat of segment " + path + ": " + errno_text(errno));
  }
  return map_fd(fd.get(), static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE,
                "segment " + path);
}

void shm_remove(const std::string& name) { ::shm_unlink(shm_path(name).c_str()); }

Mapping file_create_mapped(const std::string& path, size_t size) {
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    throw Error("object store: cannot create fallback file " + path + ": " + errno_text(errno));
  }
  // Reserve the blocks now: a full disk must surface here as an error, not later as SIGBUS
  // when a writer touches a page the file system cannot back.
  int err = size == 0 ? 0 : ::posix_fallocate(fd.get(), 0, static_cast<off_t>(size));
  if (err != 0) {
    ::unlink(path.c_str());
    const std::string msg = "object store: cannot reserve " + std::to_string(size) +
                            " bytes for fallback file " + path + ": " + errno_text(err);
    if (err == ENOSPC || err == EFBIG || err == EDQUOT) throw ObjectStoreFullError(msg);
    throw Error(msg);
  }
  try {
    return map_fd(fd.get(), size, PROT_READ | PROT_WRITE, "fallback file " + path);
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
}

Mapping file_map_readonly(const std::string& path, size_t size) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    throw Error("object store: cannot open fallback file " + path + ": " + errno_text(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || static_cast<size_t>(st.st_size) != size) {
    throw Error("object store: fallback file " + path + " has " + std::to_string(st.st_size) +
                " bytes, expected " + std::to_string(size));
  }
  return map_fd(fd.get(), size, PROT_READ, "fallback file " + path);
}

void make_dirs(const std::string& path) {
  if (path.empty()) throw Error("object store: spill_dir is empty");
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) {
      throw Error("object store: cannot create spill directory " + cur + ": " + errno_text(errno));
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw Error("object store: spill_dir " + path + " is not a directory");
  }
}

}  // namespace weft::store
