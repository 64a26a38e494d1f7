#include "control_client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/unix_socket_path.hpp"
#include "sessions.hpp"

namespace weft::cli {
namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string exchange(const std::filesystem::path& socket, const std::string& raw,
                     std::chrono::milliseconds timeout) {
  Fd s{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const UnixSocketPath at(socket);  // a deep folder: through a descriptor of it
  if (!at.ok())
    throw std::runtime_error("cannot open " + socket.parent_path().string() + ": " +
                             std::strerror(errno));
  const sockaddr_un addr = at.address();
  if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("cannot connect to " + socket.string() + ": " + std::strerror(errno) +
                             " (has the job ended?)");
  size_t off = 0;
  while (off < raw.size()) {
    const ssize_t n = ::send(s.fd, raw.data() + off, raw.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the job may close early (an oversize request): read its reply
    off += static_cast<size_t>(n);
  }
  ::shutdown(s.fd, SHUT_WR);
  std::string reply;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{s.fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
      throw std::runtime_error("the job did not answer on " + socket.string() + " within " +
                               std::to_string(timeout.count()) + " ms");
    const ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error("reading " + socket.string() + ": " + std::strerror(errno));
    if (n == 0) break;
    reply.append(buf, static_cast<size_t>(n));
  }
  return reply;
}

nlohmann::json call(const std::filesystem::path& session_dir, const std::string& command,
                    std::chrono::milliseconds timeout) {
  const std::string token = read_token(session_dir);
  const std::string text = exchange(session_dir / control::kSocketName,
                                    control::encode_request({command}, token), timeout);
  control::Reply r = control::parse_reply(text);
  if (!r.ok) throw std::runtime_error("the job refused the request (" + r.code + "): " + r.error);
  return std::move(r.result);
}

}  // namespace weft::cli
