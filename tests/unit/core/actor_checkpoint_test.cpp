// Actor checkpoints without MPI (core/actor_checkpoints.hpp): when one is due, the state's layout
// (per-caller positions + the object) and its checks, and a write/restore round trip through
// src/ft with a real serializable class, including a damaged file refused with its name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../ft/ft_test_util.hpp"
#include "core/actor_checkpoints.hpp"
#include "weft/errors.hpp"

namespace {

struct Tally {
  std::vector<int> seen;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& seen;
  }
};

// State written by a free serialize in boost::serialization (Boost manual's non-intrusive form).
struct Ledger {
  std::vector<int> entries;
};
// No serialize at all: an ordinary actor, which cannot be checkpointed.
class Plain final {
  std::vector<int> entries_;
};

}  // namespace

namespace boost::serialization {
template <class Archive>
void serialize(Archive& ar, Ledger& l, unsigned) {
  ar& l.entries;
}
}  // namespace boost::serialization

namespace weft::core {
namespace {

TEST(Checkpointable, SeesAFreeSerializeInBoostNamespaceAndRefusesAClassWithout) {
  EXPECT_TRUE(detail::checkpointable<Tally>);
  EXPECT_TRUE(detail::checkpointable<Ledger>);
  EXPECT_FALSE(detail::checkpointable<Plain>);
  Ledger l{{1, 2, 3}};
  serde::Buffer out;
  detail::save_actor_state<Ledger>(&l, out);
  Ledger back;
  serde::Reader in(out.data(), out.size());
  detail::load_actor_state<Ledger>(&back, in);
  EXPECT_EQ(back.entries, l.entries);
}

namespace fs = std::filesystem;
using namespace std::chrono_literals;

detail::ClassEntry tally_class() {
  detail::ClassEntry ce;
  ce.name = "Tally";
  static_assert(detail::checkpointable<Tally>);
  ce.save_state = &detail::save_actor_state<Tally>;
  ce.load_state = &detail::load_actor_state<Tally>;
  return ce;
}

TEST(CheckpointState, RoundTripsCallersCallsAndObject) {
  CheckpointState s;
  s.done_next = {{0, 17}, {3, 2}};
  s.results[0] = {{16, {'r', '1'}}};
  s.calls = 19;
  s.object = {'a', 'b', 'c'};
  const std::vector<char> bytes = s.encode();
  CheckpointState back = CheckpointState::decode(bytes, "test");
  EXPECT_EQ(back.done_next, s.done_next);
  EXPECT_EQ(back.calls, 19u);
  ASSERT_EQ(back.results[0].size(), 1u);
  EXPECT_EQ(back.results[0][0].seq, 16u);
  EXPECT_EQ(back.results[0][0].value, (std::vector<char>{'r', '1'}));
  EXPECT_EQ(back.object, s.object);
}

TEST(CheckpointState, RefusesTruncatedOrForeignBytes) {
  CheckpointState s;
  s.done_next = {{1, 5}};
  s.object = std::vector<char>(100, 'x');
  std::vector<char> bytes = s.encode();
  std::vector<char> cut(bytes.begin(), bytes.end() - 1);
  EXPECT_THROW(CheckpointState::decode(cut, "test"), Error);
  std::vector<char> foreign = bytes;
  foreign[0] ^= 0x55;
  EXPECT_THROW(CheckpointState::decode(foreign, "test"), Error);
  std::vector<char> tiny(5, 0);
  EXPECT_THROW(CheckpointState::decode(tiny, "test"), Error);
}

TEST(ActorCheckpointer, DueAfterEveryNCallsAndNotWhenNothingChanged) {
  detail::ClassEntry ce = tally_class();
  const ft::testing::TempDir scratch;
  ActorCheckpointer c(scratch.path / "a.ckpt.h5", "Tally", &ce, CheckpointPolicy{3, 0ms});
  const auto now = std::chrono::steady_clock::now();
  EXPECT_FALSE(c.due(now));
  c.note_call(0, 0);
  c.note_call(0, 1);
  EXPECT_FALSE(c.due(now));
  c.note_call(0, 2);
  EXPECT_TRUE(c.due(now));
}

TEST(ActorCheckpointer, DueByTimeOnlyAfterTheInterval) {
  detail::ClassEntry ce = tally_class();
  const ft::testing::TempDir scratch;
  ActorCheckpointer c(scratch.path / "a.ckpt.h5", "Tally", &ce, CheckpointPolicy{0, 50ms});
  const auto t0 = std::chrono::steady_clock::now();
  c.note_call(0, 0);
  EXPECT_FALSE(c.due(t0));
  EXPECT_TRUE(c.due(t0 + 1s));
}

TEST(ActorCheckpointer, WritesAndRestoresStateAndCompletedPositions) {
  detail::ClassEntry ce = tally_class();
  const ft::testing::TempDir scratch;
  const fs::path file = scratch.path / "t.ckpt.h5";
  fs::remove(file);
  Tally t;
  {
    ActorCheckpointer w(file, "Tally", &ce, CheckpointPolicy{1, 0ms});
    Tally fresh;
    EXPECT_FALSE(w.restore(&fresh));  // never written: start from the constructor
    for (int i = 0; i < 12; ++i) {
      t.seen.push_back(i);
      const std::vector<char> result(1, static_cast<char>('a' + i));
      w.note_call(2, static_cast<uint64_t>(i), &result);
    }
    w.write(&t);
    EXPECT_TRUE(w.take_first_write());  // the creator is told once
    EXPECT_FALSE(w.take_first_write());
  }
  ActorCheckpointer r(file, "Tally", &ce, CheckpointPolicy{1, 0ms});
  Tally back;
  // The file is there, but no incarnation of this actor wrote one: another run's, ignored.
  EXPECT_FALSE(r.restore(&back, /*expected=*/false));
  EXPECT_TRUE(back.seen.empty());
  ASSERT_TRUE(r.restore(&back, /*expected=*/true));
  EXPECT_EQ(back.seen, t.seen);
  EXPECT_EQ(r.calls(), 12u);
  EXPECT_TRUE(r.completed(2, 11));
  EXPECT_FALSE(r.completed(2, 12));
  EXPECT_FALSE(r.completed(1, 0));
  // The 8 latest results per caller come back with it; older ones do not.
  ASSERT_NE(r.result_of(2, 11), nullptr);
  EXPECT_EQ(*r.result_of(2, 11), std::vector<char>(1, 'a' + 11));
  EXPECT_NE(r.result_of(2, 4), nullptr);
  EXPECT_EQ(r.result_of(2, 3), nullptr);
  // Another class's reader refuses it, naming the file.
  ActorCheckpointer other(file, "Other", &ce, CheckpointPolicy{});
  try {
    other.restore(&back, /*expected=*/true);
    FAIL() << "a checkpoint of another class was restored";
  } catch (const CheckpointError& e) {
    EXPECT_EQ(e.kind(), CheckpointError::Kind::kWrongClass);
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos);
  }
  // Missing where an earlier incarnation wrote one (a checkpoint_dir this host does not see): an
  // error, not a fresh start.
  ActorCheckpointer elsewhere(file.parent_path() / "gone.ckpt.h5", "Tally", &ce, {});
  EXPECT_THROW(elsewhere.restore(&back, /*expected=*/true), CheckpointError);
  EXPECT_FALSE(elsewhere.restore(&back, /*expected=*/false));
  // A truncated file: an error naming it, never a fresh start.
  fs::resize_file(file, fs::file_size(file) / 2);
  EXPECT_THROW(r.restore(&back, /*expected=*/true), CheckpointError);
}

}  // namespace
}  // namespace weft::core
