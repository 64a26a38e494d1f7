#include "core/control_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <random>

#include "common/control_protocol.hpp"
#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "common/unix_socket_path.hpp"
#include "core/event_loop.hpp"
#include "core/state_gather.hpp"
#include "core/state_queries.hpp"
#include "weft/errors.hpp"

namespace weft::core {
namespace {

constexpr auto kClientTimeout = std::chrono::milliseconds(2000);  // to send its request

std::string random_token() {
  std::random_device rd;  // /dev/urandom
  static const char* kHex = "0123456789abcdef";
  std::string t;
  while (t.size() < control::kTokenHexChars) {
    const uint32_t v = rd();
    for (int i = 0; i < 8 && t.size() < control::kTokenHexChars; ++i)
      t += kHex[(v >> (4 * i)) & 15];
  }
  return t;
}

SessionDirError file_error(const std::filesystem::path& p, const char* what) {
  return SessionDirError("rank 0: cannot " + std::string(what) + " " + p.string() + ": " +
                         std::strerror(errno) +
                         "; set session_dir (WEFT_SESSION_DIR) to a writable local folder");
}

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

ControlServer::ControlServer(const std::filesystem::path& session_dir,
                             std::chrono::milliseconds loop_timeout)
    : socket_path_(session_dir / control::kSocketName),
      token_path_(session_dir / control::kTokenName),
      loop_timeout_(loop_timeout),
      token_(random_token()) {
  // The token first: a client that finds the socket finds its token.
  {
    const int fd = ::open(token_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw file_error(token_path_, "create the control token");
    const std::string line = token_ + "\n";
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    ::close(fd);
    if (!ok) throw file_error(token_path_, "write the control token");
  }
  // A sockaddr_un holds 107 bytes of path; a deeper session directory is reached through a
  // descriptor of it (/proc/self/fd/N/control.sock), as the CLI does (unix_socket_path.hpp).
  const UnixSocketPath at(socket_path_);
  if (!at.ok()) throw file_error(socket_path_.parent_path(), "open the session directory");
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw file_error(socket_path_, "open a Unix socket for");
  const sockaddr_un addr = at.address();
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::chmod(socket_path_.c_str(), 0600) != 0 || ::listen(listen_fd_, 16) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    listen_fd_ = -1;
    std::filesystem::remove(token_path_);
    errno = err;
    throw file_error(socket_path_, "serve the control socket");
  }
  if (::pipe2(wake_, O_CLOEXEC) != 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    throw file_error(socket_path_, "make a wake-up pipe for");
  }
  thread_ = std::thread([this] {
    name_this_thread("control");
    serve();
  });
}

ControlServer::~ControlServer() { stop(); }

void ControlServer::stop() {
  if (thread_.joinable()) {
    const char c = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_[1], &c, 1);
    thread_.join();
  }
  loop_.store(nullptr, std::memory_order_release);
  for (int* fd : {&listen_fd_, &wake_[0], &wake_[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  std::error_code ec;
  std::filesystem::remove(socket_path_, ec);
  std::filesystem::remove(token_path_, ec);
}

void ControlServer::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      WEFT_LOG(Error) << "control socket " << socket_path_.string()
                      << ": poll failed: " << std::strerror(errno) << "; it serves no more";
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    answer(fd);
    ::close(fd);
  }
}

void ControlServer::answer(int fd) {
  // Read one line, at most the cap plus one byte (so an oversize request is known as such),
  // within kClientTimeout: a client that sends nothing cannot hold the socket.
  std::string req;
  const auto deadline = std::chrono::steady_clock::now() + kClientTimeout;
  char buf[4096];
  bool complete = false;
  while (req.size() <= control::kMaxRequestBytes) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      complete = n == 0;  // the client closed its side: what came is the request
      break;
    }
    req.append(buf, static_cast<size_t>(n));
    if (req.find('\n') != std::string::npos) {
      complete = true;
      break;
    }
  }
  std::string reply;
  if (req.size() > control::kMaxRequestBytes) {
    reply = control::error_reply(
        "oversize", "the request has more than " + std::to_string(control::kMaxRequestBytes) +
                        " bytes; a control request is one short JSON line");
  } else if (!complete) {
    reply = control::error_reply("timeout", "no complete request (one JSON line) within " +
                                                std::to_string(kClientTimeout.count()) + " ms");
  } else {
    const size_t nl = req.find('\n');
    reply = reply_to(nl == std::string::npos ? req : req.substr(0, nl));
  }
  write_all(fd, reply);
  // Closing with unread bytes would reset the connection, and the client could lose the reply
  // (an oversize request): end our side, then drop what it still sends, for a bounded time.
  ::shutdown(fd, SHUT_WR);
  const auto drain_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  for (size_t dropped = 0; dropped < (1u << 20);) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        drain_end - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    dropped += static_cast<size_t>(n);
  }
}

std::string ControlServer::reply_to(const std::string& request) {
  control::ParseResult r = control::parse_request(request, token_);
  if (!r.request) return control::error_reply(r.code, r.error);
  if (r.request->command == "ping") return control::ok_reply({{"pong", true}});
  EventLoop* loop = loop_.load(std::memory_order_acquire);
  if (!loop) return control::error_reply("busy", "the job is starting or ending; try again");
  const std::string& command = r.request->command;
  const uint8_t want = command == "snapshot"   ? kWantObjects
                       : command == "timeline" ? kWantTimeline
                                               : 0;  // metrics: the figures alone
  try {
    std::optional<nlohmann::json> merged = gather_and_wait(*loop, want, loop_timeout_);
    if (!merged) {
      return control::error_reply(
          "busy", "rank 0's event loop did not answer within " +
                      std::to_string(loop_timeout_.count()) +
                      " ms after the ranks' deadline (it is busy, e.g. in one long turn); try again");
    }
    return control::ok_reply(std::move(*merged));
  } catch (const std::exception& e) {  // the state could not be built, or not encoded
    return control::error_reply("internal", e.what());
  }
}

}  // namespace weft::core
