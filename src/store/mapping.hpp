// File-backed mappings for fallback objects, and the spill directory. Each returns a
// weft::Mapping that owns its range and unmaps it once.
#pragma once

#include <cstddef>
#include <string>

#include "common/shm_mapping.hpp"

namespace weft::store {

// The mapping type (weft::Mapping) and the shared-memory segment functions (weft::shm_create,
// shm_attach, shm_remove) are common/shm_mapping.hpp, shared with src/net.
using weft::shm_remove;  // callers of the store name it as store::shm_remove

// A file of exactly `size` bytes with its blocks reserved (posix_fallocate), mapped read-write.
// Throws ObjectStoreFullError (no space, file size limit) or weft::Error naming the path.
Mapping file_create_mapped(const std::string& path, size_t size);
// Maps an existing file read-only (readers of fallback objects); weft::Error if it is missing or
// its size differs from `size`.
Mapping file_map_readonly(const std::string& path, size_t size);

// mkdir -p; weft::Error naming the path on failure.
void make_dirs(const std::string& path);

}  // namespace weft::store
