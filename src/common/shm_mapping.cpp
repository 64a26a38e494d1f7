#include "common/shm_mapping.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "weft/errors.hpp"

namespace weft {
namespace {

constexpr const char* kShmDir = "/dev/shm";

std::string describe(const std::string& path, size_t size) {
  return "shared-memory segment " + path + " (" + std::to_string(size) + " bytes)";
}

std::string shm_full_hint() {
  return std::string(" — ") + kShmDir +
         " is full: remove stale segments there (ls -l /dev/shm), give the job a smaller "
         "object store (WEFT_OBJECT_STORE_MEMORY), or enlarge /dev/shm";
}

// Bytes free to unprivileged users in /dev/shm, or -1 when it cannot be told.
long long shm_available() {
  struct statvfs vfs {};
  if (::statvfs(kShmDir, &vfs) != 0) return -1;
  return static_cast<long long>(vfs.f_bavail) * static_cast<long long>(vfs.f_frsize);
}

// Unlinks the half-made segment and throws.
[[noreturn]] void fail_create(const std::string& path, size_t size, const std::string& what,
                              int err) {
  ::shm_unlink(path.c_str());
  throw Error("cannot " + what + " " + describe(path, size) + ": " + std::strerror(err) +
              (err == ENOSPC || err == ENOMEM ? shm_full_hint() : ""));
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

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

bool UniqueFd::close() {
  const bool ok = fd_ < 0 || ::close(fd_) == 0;
  fd_ = -1;
  return ok;
}

Mapping map_fd(int fd, size_t size, int prot, const std::string& what) {
  if (size == 0) return Mapping();
  void* p = ::mmap(nullptr, size, prot, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    throw Error("mmap of " + what + " (" + std::to_string(size) +
                " bytes) failed: " + std::strerror(errno));
  }
  return Mapping(p, size);
}

std::string shm_object_path(const std::string& name) {
  return name.starts_with("/") ? name : "/" + name;
}

Mapping shm_create(const std::string& name, size_t size) {
  const std::string path = shm_object_path(name);
  const long long avail = shm_available();
  if (avail >= 0 && static_cast<unsigned long long>(avail) < size) {
    throw Error("cannot create " + describe(path, size) + ": only " + std::to_string(avail) +
                " bytes free in " + kShmDir + shm_full_hint());
  }
  UniqueFd fd(::shm_open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    const int err = errno;
    throw Error("cannot create " + describe(path, size) + ": " + std::strerror(err) +
                (err == EEXIST ? " (the name is in use: segment names must be unique per job "
                                 "and node; a crashed job may have left it in /dev/shm)"
                               : ""));
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) fail_create(path, size, "size", errno);
  if (size == 0) return Mapping();
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) fail_create(path, size, "map", errno);
  return Mapping(p, size);
}

Mapping shm_attach(const std::string& name, size_t size) {
  const std::string path = shm_object_path(name);
  UniqueFd fd(::shm_open(path.c_str(), O_RDWR | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    throw Error("cannot attach to shared-memory segment " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw Error("cannot attach to shared-memory segment " + path +
                ": fstat: " + std::strerror(errno));
  }
  const size_t have = static_cast<size_t>(st.st_size);
  if (size != 0 && have < size) {
    throw Error("cannot attach to " + describe(path, size) + ": it has only " +
                std::to_string(have) + " bytes");
  }
  const size_t len = size != 0 ? size : have;
  return map_fd(fd.get(), len, PROT_READ | PROT_WRITE, describe(path, len));
}

void shm_remove(const std::string& name) { ::shm_unlink(shm_object_path(name).c_str()); }

}  // namespace weft
