// A Unix socket's address for any path: a sockaddr_un holds at most 107 bytes of path, so a
// socket in a deeper folder is named through a descriptor of that folder,
// /proc/self/fd/<fd>/<name>, which Linux resolves like the folder itself. The control server
// binds and the `weft` CLI connects through this, so a deep TMPDIR works for both.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

namespace weft {

class UnixSocketPath {
 public:
  explicit UnixSocketPath(const std::filesystem::path& socket) : path_(socket.string()) {
    if (path_.size() < sizeof(sockaddr_un::sun_path)) return;
    dir_fd_ = ::open(socket.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd_ >= 0)
      path_ = "/proc/self/fd/" + std::to_string(dir_fd_) + "/" + socket.filename().string();
  }
  ~UnixSocketPath() {
    if (dir_fd_ >= 0) ::close(dir_fd_);
  }
  UnixSocketPath(const UnixSocketPath&) = delete;
  UnixSocketPath& operator=(const UnixSocketPath&) = delete;

  // False when the path is too long and its folder cannot be opened (errno says why).
  bool ok() const { return path_.size() < sizeof(sockaddr_un::sun_path); }
  sockaddr_un address() const {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path_.c_str(), path_.size() + 1);
    return a;
  }

 private:
  std::string path_;
  int dir_fd_ = -1;
};

}  // namespace weft
