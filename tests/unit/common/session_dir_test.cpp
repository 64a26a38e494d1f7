#include "common/session_dir.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "weft/errors.hpp"

namespace weft {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* n) -> const char* {
    auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(SessionDirName, SlurmJobAndStepWithRank0Pid) {
  EXPECT_EQ(session_dir_name(env_of({{"SLURM_JOB_ID", "4242"}, {"SLURM_STEP_ID", "3"}}), 777),
            "weft-slurm-4242.3-777");
  EXPECT_EQ(session_dir_name(env_of({{"SLURM_JOB_ID", "4242"}}), 777), "weft-slurm-4242-777");
}

TEST(SessionDirName, SlurmWinsOverMpirunInsideAnAllocation) {
  EXPECT_EQ(session_dir_name(
                env_of({{"SLURM_JOB_ID", "9"}, {"OMPI_MCA_ess_base_jobid", "622067713"}}), 5),
            "weft-slurm-9-5");
}

TEST(SessionDirName, MpirunJobIdThenPmixNamespace) {
  EXPECT_EQ(session_dir_name(env_of({{"OMPI_MCA_ess_base_jobid", "622067713"}}), 12),
            "weft-mpirun-622067713-12");
  // A namespace with characters a folder name should not carry is made safe, and parses back.
  const std::string n = session_dir_name(env_of({{"PMIX_NAMESPACE", "prterun-vm-1/2@1"}}), 12);
  EXPECT_EQ(n, "weft-mpirun-prterun_vm_1_2_1-12");
  ASSERT_TRUE(parse_session_dir_name(n));
  EXPECT_EQ(parse_session_dir_name(n)->job, "prterun_vm_1_2_1");
}

TEST(SessionDirName, SingletonIsLocalWithPid) {
  EXPECT_EQ(session_dir_name(env_of({{"SLURM_JOB_ID", ""}}), 31337), "weft-local-31337");
}

TEST(SessionDirName, TwoJobsOfOneLauncherIdDifferByPid) {
  auto env = env_of({{"OMPI_MCA_ess_base_jobid", "1"}});
  EXPECT_NE(session_dir_name(env, 100), session_dir_name(env, 101));
}

TEST(SessionDirName, ParsesWhatItNames) {
  auto s = parse_session_dir_name("weft-slurm-4242.3-777");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->launcher, "slurm");
  EXPECT_EQ(s->job, "4242.3");
  EXPECT_EQ(s->pid, 777);
  s = parse_session_dir_name("weft-local-31337");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->launcher, "local");
  EXPECT_EQ(s->job, "");
  EXPECT_EQ(s->pid, 31337);
}

TEST(SessionDirName, RefusesFoldersThatAreNotSessions) {
  for (const char* n :
       {"weft-example-AbC123", "weft-fuzz-x-XXXXXX", "weft-local-", "weft-local-12a",
        "weft-slurm-12", "weft-slurm--12", "weft-mpirun-1-2-3", "weft-local-0", "weftlocal-12",
        "other", "weft-local-99999999999999999999", "weft-1f2e3d4c5b6a7980"}) {
    EXPECT_FALSE(parse_session_dir_name(n)) << n;
  }
}

TEST(SessionsRoot, SettingThenTmpdirThenTmp) {
  EXPECT_EQ(sessions_root(env_of({{"TMPDIR", "/scratch"}}), "/fast"), "/fast");
  EXPECT_EQ(sessions_root(env_of({{"TMPDIR", "/scratch"}}), ""), "/scratch");
  EXPECT_EQ(sessions_root(env_of({}), ""), "/tmp");
}

class PrivateDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                       "/weft-sessiondir-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
};

TEST_F(PrivateDir, MadeWithMode0700EvenUnderAPermissiveUmask) {
  const mode_t old = ::umask(0);
  make_private_dir(root_ / "s", /*exclusive=*/true);
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "s").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(PrivateDir, AnExistingFolderIsAnotherJobsWhenExclusive) {
  make_private_dir(root_ / "s", true);
  try {
    make_private_dir(root_ / "s", true);
    FAIL() << "a second exclusive make succeeded";
  } catch (const SessionDirError& e) {
    EXPECT_NE(std::string(e.what()).find((root_ / "s").string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("weft clean"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(make_private_dir(root_ / "s", false));  // another node of this host
}

// A killed job leaves its folder; a later process that gets the same PID (and launcher id) names
// its own folder the same. Nothing serves its control socket, so it is taken over, emptied.
// A folder whose socket answers is a live job's (another PID namespace): refused as before.
TEST_F(PrivateDir, AFolderADeadJobLeftUnderThisProcesssNameIsTakenOver) {
  const auto dir = root_ / ("weft-mpirun-77-" + std::to_string(::getpid()));
  make_private_dir(dir, true);
  { std::ofstream(dir / "control.token") << "old"; }
  std::filesystem::create_directory(dir / "node0");
  EXPECT_NO_THROW(make_private_dir(dir, true));
  EXPECT_TRUE(std::filesystem::is_empty(dir));

  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock = (dir / "control.sock").string();
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  EXPECT_THROW(make_private_dir(dir, true), SessionDirError);
  ::close(fd);

  // Another PID in the name: not this process's, so never taken over.
  const auto other = root_ / ("weft-mpirun-77-" + std::to_string(::getpid() + 1));
  make_private_dir(other, true);
  EXPECT_THROW(make_private_dir(other, true), SessionDirError);
}

TEST_F(PrivateDir, AnOpenFolderIsRefusedEvenWhenShared) {
  std::filesystem::create_directory(root_ / "open");
  ::chmod((root_ / "open").c_str(), 0755);
  EXPECT_THROW(make_private_dir(root_ / "open", false), SessionDirError);
}

TEST_F(PrivateDir, AMissingParentSaysWhichSettingToChange) {
  try {
    make_private_dir(root_ / "no" / "such", true);
    FAIL();
  } catch (const SessionDirError& e) {
    EXPECT_NE(std::string(e.what()).find("WEFT_SESSION_DIR"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace weft
