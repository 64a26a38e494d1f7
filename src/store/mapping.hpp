// RAII owners of memory mappings: the node's POSIX shared-memory segment and the file-backed
// mappings used for fallback objects. Each owns its descriptor-free mapping and unmaps it once.
#pragma once

#include <cstddef>
#include <string>

namespace weft::store {

// A mapping of `size` bytes at `addr`; unmapped on destruction. Move-only.
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
  size_t size() const { return size_; }
  explicit operator bool() const { return addr_ != nullptr; }
  void reset();

 private:
  void* addr_ = nullptr;
  size_t size_ = 0;
};

// POSIX shm segment `/name`. create() fails if it exists (two stores must never share a name by
// accident); open() maps an existing one at its current size. Errors throw weft::Error naming
// the segment and the errno.
Mapping shm_create(const std::string& name, size_t size);
Mapping shm_open_existing(const std::string& name);
void shm_remove(const std::string& name);  // best effort: the name disappears, mappings stay

// A file of exactly `size` bytes with its blocks reserved (posix_fallocate), mapped read-write.
// Throws ObjectStoreFullError (no space, file size limit) or weft::Error naming the path.
Mapping file_create_mapped(const std::string& path, size_t size);
// Maps an existing file read-only (readers of fallback objects); weft::Error if it is missing or
// its size differs from `size`.
Mapping file_map_readonly(const std::string& path, size_t size);

// mkdir -p; weft::Error naming the path on failure.
void make_dirs(const std::string& path);

}  // namespace weft::store
