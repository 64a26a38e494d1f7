// The control socket's server without MPI: files and modes, the rejections a client gets, and
// the "busy" answer while no loop is attached. (Against a running job: tests/ops/.)
#include "core/control_server.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "common/control_protocol.hpp"
#include "common/unix_socket_path.hpp"
#include "weft/errors.hpp"

namespace weft::core {
namespace {

using namespace std::chrono_literals;

std::string round_trip(const std::filesystem::path& sock, const std::string& raw,
                       bool half_close = true) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  const UnixSocketPath at(sock);
  const sockaddr_un a = at.address();
  if (!at.ok() || ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return "connect failed";
  }
  size_t off = 0;
  while (off < raw.size()) {
    const ssize_t n = ::send(fd, raw.data() + off, raw.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += n;
  }
  if (half_close) ::shutdown(fd, SHUT_WR);
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, n);
  }
  ::close(fd);
  return out;
}

mode_t mode_of(const std::filesystem::path& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 0777;
}

class ControlServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = "/tmp/weft-ctl-test-XXXXXX";  // short: a socket path has 107 bytes
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string token_file() {
    std::ifstream in(dir_ / control::kTokenName);
    std::string t;
    std::getline(in, t);
    return t;
  }
  std::filesystem::path dir_;
};

TEST_F(ControlServerTest, SocketAndTokenAreTheUsersOnlyAndGoAtStop) {
  {
    ControlServer s(dir_, 200ms);
    EXPECT_EQ(mode_of(dir_ / control::kSocketName), 0600u);
    EXPECT_EQ(mode_of(dir_ / control::kTokenName), 0600u);
    EXPECT_EQ(token_file(), s.token());
    EXPECT_EQ(s.token().size(), control::kTokenHexChars);
    std::filesystem::create_directory(dir_ / "other");
    ControlServer other(dir_ / "other", 200ms);  // another job's server has another token
    EXPECT_NE(other.token(), s.token());
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / control::kSocketName));
  EXPECT_FALSE(std::filesystem::exists(dir_ / control::kTokenName));
}

TEST_F(ControlServerTest, AnswersPingAndRejectsBadRequestsAndGoesOn) {
  ControlServer s(dir_, 200ms);
  const auto sock = dir_ / control::kSocketName;
  auto code = [&](const std::string& raw) {
    return control::parse_reply(round_trip(sock, raw)).code;
  };
  EXPECT_EQ(code(control::encode_request({"ping"}, "0123")), "bad_token");
  EXPECT_EQ(code("{{{{\n"), "malformed");
  EXPECT_EQ(code("{\"version\":7,\"token\":\"" + s.token() + "\",\"command\":\"ping\"}\n"),
            "bad_version");
  EXPECT_EQ(code(std::string(control::kMaxRequestBytes + 10, 'x')), "oversize");
  // After all that, a good request is answered.
  control::Reply r =
      control::parse_reply(round_trip(sock, control::encode_request({"ping"}, s.token())));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.result["pong"], true);
}

TEST_F(ControlServerTest, ASnapshotWithoutALoopIsBusyNotAHang) {
  ControlServer s(dir_, 200ms);
  control::Reply r = control::parse_reply(
      round_trip(dir_ / control::kSocketName, control::encode_request({"snapshot"}, s.token())));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.code, "busy");
  EXPECT_NE(r.error.find("try again"), std::string::npos) << r.error;
}

TEST_F(ControlServerTest, AClientThatSendsNothingIsDroppedAndOthersAreServed) {
  ControlServer s(dir_, 200ms);
  const auto sock = dir_ / control::kSocketName;
  const auto t0 = std::chrono::steady_clock::now();
  // Half a request, never finished and never closed: the server stops waiting for it.
  control::Reply r = control::parse_reply(round_trip(sock, "{\"version\":1", /*half_close=*/false));
  EXPECT_EQ(r.code, "timeout");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 8s);
  r = control::parse_reply(round_trip(sock, control::encode_request({"ping"}, s.token())));
  EXPECT_TRUE(r.ok) << r.error;
}

TEST_F(ControlServerTest, ASessionDirectoryDeeperThanASocketPathTakesStillServes) {
  // sockaddr_un holds 107 bytes: the socket is bound and reached through the folder's fd.
  const std::filesystem::path deep = dir_ / std::string(100, 'd') / std::string(100, 'e');
  std::filesystem::create_directories(deep);
  ControlServer s(deep, 200ms);
  ASSERT_GT((deep / control::kSocketName).string().size(), sizeof(sockaddr_un::sun_path));
  EXPECT_TRUE(std::filesystem::exists(deep / control::kSocketName));
  EXPECT_EQ(mode_of(deep / control::kSocketName), 0600u);
  control::Reply r = control::parse_reply(
      round_trip(deep / control::kSocketName, control::encode_request({"ping"}, s.token())));
  EXPECT_TRUE(r.ok) << r.error;
  s.stop();
  EXPECT_FALSE(std::filesystem::exists(deep / control::kSocketName));
}

}  // namespace
}  // namespace weft::core
