// One spill file per object: an HDF5 file holding one dataset of bytes ("data") with attributes
// naming the object, its size and its checksum. One file per object means removing an object
// frees its disk space at once; no file is kept alive by its neighbours.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "weft/detail/ids.hpp"

namespace weft::store {

// <dir>/<owner>_<kind>_<seq>.h5 and .fallback: every rank derives the same names.
std::string spill_path(const std::string& dir, const ObjectId& id);
std::string fallback_path(const std::string& dir, const ObjectId& id);

// Writes the object to `path` (through a temporary name and a rename, so a crash never leaves a
// file that looks complete). Throws SpillError naming the path, the object and the reason;
// `*disk_full` is set when the reason was no space or the file size limit.
void write_spill_file(const std::string& path, const ObjectId& id, std::span<const std::byte> data,
                      bool* disk_full);

// Reads the object back into `out` (exactly its size) and verifies the file's attributes and
// checksum. Throws SpillError naming the path and the object if the file is missing, unreadable,
// of another object or size, or corrupted.
void read_spill_file(const std::string& path, const ObjectId& id, std::span<std::byte> out);

}  // namespace weft::store
