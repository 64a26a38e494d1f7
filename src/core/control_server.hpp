// ControlServer: rank 0's side of the control socket (docs/operations.md, "The weft CLI"). It
// owns the Unix socket `control.sock` (mode 0600) and the token file `control.token` (0600) in
// the job's session directory, and serves them from a thread of its own: one request per
// connection, parsed by control::parse_request (bounded, never throws), so nothing a client
// sends can crash the job or hold its event loop. The job's state is gathered from every rank
// by rank 0's loop (state_queries.hpp; ranks that do not answer within 1 s are named as such);
// when the loop itself does not finish within `loop_timeout` after that, the client is told the
// job is busy and to try again, and the late answer is dropped. There is no TCP listener.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace weft::core {

class EventLoop;

class ControlServer {
 public:
  // Writes the token and binds the socket in `session_dir`; throws weft::SessionDirError naming
  // the file and the cause. Requests are answered "starting" until attach().
  ControlServer(const std::filesystem::path& session_dir, std::chrono::milliseconds loop_timeout);
  ~ControlServer();  // stop()
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  void attach(EventLoop* loop) { loop_.store(loop, std::memory_order_release); }
  // Joins the thread and removes the socket and the token. Before the loop goes away.
  void stop();

  const std::filesystem::path& socket_path() const { return socket_path_; }
  const std::string& token() const { return token_; }

 private:
  void serve();
  void answer(int fd);
  std::string reply_to(const std::string& request);

  const std::filesystem::path socket_path_, token_path_;
  const std::chrono::milliseconds loop_timeout_;
  std::string token_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: stop() writes, the thread's poll wakes
  std::atomic<EventLoop*> loop_{nullptr};
  std::thread thread_;
};

}  // namespace weft::core
