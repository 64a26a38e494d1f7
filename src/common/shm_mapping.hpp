// The one owner of memory mappings in Weft: `Mapping` unmaps its range exactly once, and the
// POSIX shared-memory functions below (shm_open + ftruncate + mmap, attach, unlink) are the only
// place that creates segments — the node object store (src/store) and the transport's rings
// (src/net) both use them. Errors are weft::Error naming the segment, the size and, where the
// cause is a full /dev/shm, what to do about it.
#pragma once

#include <cstddef>
#include <string>

namespace weft {

// `size` bytes mapped at `addr`; unmapped on destruction. Move-only.
class Mapping {
 public:
  Mapping() = default;
  Mapping(void* addr, size_t size) : addr_(addr), size_(size) {}
  Mapping(Mapping&& o) noexcept : addr_(o.addr_), size_(o.size_) { o.addr_ = nullptr; }
  Mapping& operator=(Mapping&& o) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { reset(); }

  void* addr() const { return addr_; }
  char* data() const { return static_cast<char*>(addr_); }
  size_t size() const { return size_; }
  explicit operator bool() const { return addr_ != nullptr; }
  void reset();

 private:
  void* addr_ = nullptr;
  size_t size_ = 0;
};

// Owns a file descriptor; closed on destruction. Move-only.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { close(); }
  int get() const { return fd_; }
  bool close();  // false if close(2) reported an error

 private:
  int fd_;
};

// Maps `size` bytes of `fd` (MAP_SHARED, protection `prot`); weft::Error naming `what` and the
// size on failure. A size of 0 gives an empty Mapping.
Mapping map_fd(int fd, size_t size, int prot, const std::string& what);

// Creates the POSIX shared-memory object `name` ("/x" or "x"), sized to `size` bytes and mapped
// read-write. Fails if the name exists (two users must never share a segment by accident), and
// up front when the file system behind /dev/shm has less than `size` bytes free — tmpfs would
// accept the size and kill the process with SIGBUS later, at the first page it cannot back.
// On any failure the name is unlinked again.
Mapping shm_create(const std::string& name, size_t size);

// Maps the existing segment `name` read-write: its whole current size when `size` is 0, else
// exactly `size` bytes (weft::Error if the segment is smaller).
Mapping shm_attach(const std::string& name, size_t size = 0);

// Removes the name (best effort); mappings stay valid until unmapped.
void shm_remove(const std::string& name);

// "/name" for shm_open.
std::string shm_object_path(const std::string& name);

}  // namespace weft
