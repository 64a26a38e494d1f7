#include "store/mapping.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "weft/errors.hpp"

namespace weft::store {
namespace {

std::string errno_text(int err) { return std::string(std::strerror(err)); }

// Store errors name the store: map_fd's messages get the same prefix as the rest.
Mapping map_file(int fd, size_t size, int prot, const std::string& what) {
  try {
    return map_fd(fd, size, prot, what);
  } catch (const Error& e) {
    throw Error(std::string("object store: ") + e.what());
  }
}

}  // namespace

Mapping file_create_mapped(const std::string& path, size_t size) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    // In the spill folder: one it cannot write in (read-only, gone, not a folder) stops spilling
    // and fallback alike, so say which folder and how to move it.
    const int err = errno;
    throw SpillError("object store: cannot create fallback file " + path + ": " + errno_text(err) +
                     "; the node's spill folder must be writable (it is in the job's session "
                     "directory: set session_dir to a writable local folder)");
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
    return map_file(fd.get(), size, PROT_READ | PROT_WRITE, "fallback file " + path);
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
}

Mapping file_map_readonly(const std::string& path, size_t size) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    throw Error("object store: cannot open fallback file " + path + ": " + errno_text(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || static_cast<size_t>(st.st_size) != size) {
    throw Error("object store: fallback file " + path + " has " + std::to_string(st.st_size) +
                " bytes, expected " + std::to_string(size));
  }
  return map_file(fd.get(), size, PROT_READ, "fallback file " + path);
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
