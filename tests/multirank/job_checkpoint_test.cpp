// Whole-job checkpoints through the driver's API: values, objects and actors (placed on any rank
// or node) saved by name into one HDF5 file and restored by name, and the errors a driver meets
// on the way, each naming the file and the entry.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>
#include <weft/weft.hpp>

namespace {

class Ledger {
 public:
  explicit Ledger(std::string owner) : owner_(std::move(owner)) {}
  int post(std::string item, int amount) {
    lines_[item] += amount;
    return static_cast<int>(lines_.size());
  }
  std::map<std::string, int> lines() const { return lines_; }
  std::string owner() const { return owner_; }
  int rank() const { return weft::rank(); }
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& owner_& lines_;
  }

 private:
  std::string owner_;
  std::map<std::string, int> lines_;
};

// Not serializable: its state cannot be saved (a compile error for JobCheckpoint::save, so only
// its class name is used here).
class Opaque {
 public:
  int ping() { return 1; }
};

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "weft-jobckpt-test-XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace
WEFT_ACTOR(Ledger, std::string);
WEFT_REMOTE(&Ledger::post);
WEFT_REMOTE(&Ledger::lines);
WEFT_REMOTE(&Ledger::owner);
WEFT_REMOTE(&Ledger::rank);
WEFT_ACTOR(Opaque);
WEFT_REMOTE(&Opaque::ping);

TEST(JobCheckpoint, ValuesObjectsAndActorsComeBackByName) {
  TempDir dir;
  int step = 7;
  std::vector<double> table{0.5, 1.5, 2.5};
  weft::ObjectRef<std::string> note = weft::put(std::string(300 * 1024, 'n'));  // in the store
  // Placed where there is room: its state may cross ranks (and nodes, with virtual nodes).
  auto ledger = weft::actor<Ledger>(std::string("ops")).remote();
  for (int i = 0; i < 20; ++i) ledger.task(&Ledger::post).remote("item" + std::to_string(i % 5), i);
  weft::on_job_checkpoint([&](weft::JobCheckpoint& ck) {
    ck.save("step", step);
    ck.save("table", table);
    ck.save("note", note);
    ck.save("ledger", ledger);
  });
  EXPECT_EQ(weft::checkpoint_job(dir.path), 1u);
  EXPECT_EQ(weft::checkpoint_job(dir.path), 2u);  // epochs count on
  const auto before = ledger.task(&Ledger::lines).remote().get();
  ASSERT_EQ(before.size(), 5u);
  ledger.task(&Ledger::post).remote("later", 1).get();  // after the checkpoint: not in it

  auto r = weft::restore_job(dir.path);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->epoch(), 2u);
  EXPECT_EQ(r->file(), (dir.path / "job.ckpt.h5").string());
  EXPECT_TRUE(r->contains("step"));
  EXPECT_TRUE(r->contains("ledger", /*actor=*/true));
  EXPECT_FALSE(r->contains("ledger"));
  EXPECT_EQ(r->value<int>("step"), 7);
  EXPECT_EQ(r->value<std::vector<double>>("table"), table);
  EXPECT_EQ(r->object<std::string>("note").get(), std::string(300 * 1024, 'n'));
  // A fresh actor (another constructor argument, any rank) takes the saved state before any call.
  auto again = r->actor<Ledger>("ledger", weft::actor<Ledger>(std::string("fresh")));
  EXPECT_EQ(again.task(&Ledger::lines).remote().get(), before);
  EXPECT_EQ(again.task(&Ledger::owner).remote().get(), "ops");  // the state, not the constructor's
  EXPECT_EQ(again.task(&Ledger::post).remote("item0", 1).get(), 5);
  weft::kill(ledger);
  weft::kill(again);
  weft::on_job_checkpoint(nullptr);
}

TEST(JobCheckpoint, NothingToRestoreIsNotAnError) {
  TempDir dir;
  EXPECT_FALSE(weft::restore_job(dir.path).has_value());
  // No folder given and no job_checkpoint_dir: a run that keeps no job checkpoints.
  EXPECT_FALSE(weft::restore_job().has_value());
  EXPECT_FALSE(weft::stop_requested());
  weft::checkpoint_point();  // no stop asked: returns at once
}

TEST(JobCheckpoint, WrongTypesAndNamesAreNamedWithTheFile) {
  TempDir dir;
  int step = 3;
  weft::on_job_checkpoint([&](weft::JobCheckpoint& ck) {
    ck.save("step", step);
    ck.save("label", std::string("x"));
  });
  weft::checkpoint_job(dir.path);
  auto r = weft::restore_job(dir.path);
  ASSERT_TRUE(r.has_value());
  const std::string file = (dir.path / "job.ckpt.h5").string();

  std::string m = error_of([&] { r->value<double>("step"); });
  EXPECT_NE(m.find("job checkpoint " + file + ", entry 'step'"), std::string::npos) << m;
  EXPECT_NE(m.find("saved as int, not as the double asked for"), std::string::npos) << m;

  m = error_of([&] { r->value<int>("stpe"); });
  EXPECT_NE(m.find("entry 'stpe': there is no value or object of that name (it has: step, label)"),
            std::string::npos)
      << m;
  m = error_of([&] { r->actor<Ledger>("step", weft::actor<Ledger>(std::string("a"))); });
  EXPECT_NE(m.find("there is no actor of that name (it has none; there is a value or object of "
                   "that name)"),
            std::string::npos)
      << m;
  weft::on_job_checkpoint(nullptr);
}

TEST(JobCheckpoint, AnActorOfAnotherClassIsRefused) {
  TempDir dir;
  auto ledger = weft::actor<Ledger>(std::string("l")).remote();
  weft::on_job_checkpoint([&](weft::JobCheckpoint& ck) { ck.save("acct", ledger); });
  weft::checkpoint_job(dir.path);
  auto r = weft::restore_job(dir.path);
  ASSERT_TRUE(r.has_value());
  const std::string m = error_of([&] { r->actor<Opaque>("acct", weft::actor<Opaque>()); });
  EXPECT_NE(m.find("entry 'acct': it holds the state of a Ledger actor, not of a Opaque"),
            std::string::npos)
      << m;
  weft::kill(ledger);
  weft::on_job_checkpoint(nullptr);
}

TEST(JobCheckpoint, AnActorRunningCallsAtOnceIsRefused) {
  TempDir dir;
  weft::ActorOptions o;
  o.max_concurrency = 2;  // its state between two calls does not exist
  auto ledger = weft::actor<Ledger>(std::string("c")).options(o).remote();
  weft::on_job_checkpoint([&](weft::JobCheckpoint& ck) { ck.save("c", ledger); });
  const std::string m = error_of([&] { weft::checkpoint_job(dir.path); });
  EXPECT_NE(m.find("actor class Ledger runs 2 calls at once (max_concurrency)"), std::string::npos)
      << m;
  EXPECT_NE(m.find("needs max_concurrency = 1"), std::string::npos) << m;
  EXPECT_FALSE(std::filesystem::exists(dir.path / "job.ckpt.h5"));
  weft::kill(ledger);
  weft::on_job_checkpoint(nullptr);
}

TEST(JobCheckpoint, MisuseIsAClearError) {
  TempDir dir;
  weft::on_job_checkpoint(nullptr);
  std::string m = error_of([&] { weft::checkpoint_job(dir.path); });
  EXPECT_NE(m.find("no checkpoint hook: register what to save with weft::on_job_checkpoint"),
            std::string::npos)
      << m;
  m = error_of([&] { weft::checkpoint_job(); });  // no folder set in this suite
  EXPECT_NE(m.find("set job_checkpoint_dir (--weft-job-checkpoint-dir=DIR"), std::string::npos)
      << m;
  weft::on_job_checkpoint([&](weft::JobCheckpoint& ck) {
    ck.save("twice", 1);
    ck.save("twice", 2);
  });
  try {
    weft::checkpoint_job(dir.path);
    ADD_FAILURE() << "two entries of one name were written";
  } catch (const weft::CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path / "job.ckpt.h5"));
  // A failing hook leaves no file either.
  weft::on_job_checkpoint([](weft::JobCheckpoint&) { throw std::runtime_error("hook refused"); });
  m = error_of([&] { weft::checkpoint_job(dir.path); });
  EXPECT_EQ(m, "hook refused");
  EXPECT_FALSE(std::filesystem::exists(dir.path / "job.ckpt.h5"));
  weft::on_job_checkpoint(nullptr);
}

TEST(JobCheckpoint, ADamagedFileIsACheckpointErrorNamingIt) {
  TempDir dir;
  weft::on_job_checkpoint([](weft::JobCheckpoint& ck) { ck.save("v", std::vector<int>(1000, 4)); });
  weft::checkpoint_job(dir.path);
  const auto file = dir.path / "job.ckpt.h5";
  std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);  // truncated
  try {
    weft::restore_job(dir.path);
    ADD_FAILURE() << "a truncated job checkpoint was read";
  } catch (const weft::CheckpointError& e) {
    EXPECT_EQ(e.file(), file.string());
    EXPECT_NE(std::string(e.what()).find("checkpoint file " + file.string()), std::string::npos)
        << e.what();
  }
  weft::on_job_checkpoint(nullptr);
}
