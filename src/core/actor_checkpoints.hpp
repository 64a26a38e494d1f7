// One actor's checkpoints (ActorOptions::checkpoint_every / checkpoint_interval,
// weft::checkpoint(handle)): when one is due, what it holds, writing it durably through src/ft,
// and restoring it into a freshly constructed object on restart. A checkpoint's state is the
// actor's serialized object plus, per caller, the position after the last call it completed, so
// a restored actor answers a call that completed before the restart (its result lost with the
// rank) with an error instead of running it twice. It runs on the thread that ran the call: with
// max_concurrency = 1 (required for checkpoints) one call of the actor runs at a time, and the
// loop hands the object from one call to the next, so no lock is needed.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "weft/detail/registry.hpp"

namespace weft::core {

struct CheckpointPolicy {
  int every = 0;                          // calls between checkpoints; 0: off
  std::chrono::milliseconds interval{0};  // time between checkpoints; 0: off
  bool on() const { return every > 0 || interval.count() > 0; }
};

// What a checkpoint holds besides the user's bytes: per caller, the next position after its last
// completed call. Pure (no I/O): tests/unit/core/actor_checkpoint_test.cpp.
struct CheckpointState {
  // A recent call's result, kept so that a restart can answer a re-sent call that had completed
  // (its result lost with the rank) with its value instead of running it again.
  struct Result {
    uint64_t seq = 0;
    std::vector<char> value;
  };
  static constexpr size_t kResultsPerCaller = 8;
  static constexpr size_t kMaxResultBytes = 64 * 1024;  // larger ones: an error says so
  std::unordered_map<int, uint64_t> done_next;  // caller rank → first position not completed
  std::unordered_map<int, std::vector<Result>> results;  // caller → its latest, oldest first
  uint64_t calls = 0;        // calls completed over the actor's lifetimes
  std::vector<char> object;  // the serialized actor

  std::vector<char> encode() const;
  // Throws weft::Error with `what` when the bytes are not a state this build wrote.
  static CheckpointState decode(std::span<const char> bytes, const std::string& what);
};

class ActorCheckpointer {
 public:
  ActorCheckpointer(std::filesystem::path file, std::string class_name,
                    const detail::ClassEntry* cls, CheckpointPolicy policy);

  // A call of `caller` at position `seq` completed (a skipped position counts too); `value`:
  // its result, kept when small and free of refs (null: not kept).
  void note_call(int caller, uint64_t seq, const std::vector<char>* value = nullptr);
  // Whether the policy asks for a checkpoint now (after note_call).
  bool due(std::chrono::steady_clock::time_point now) const;
  // Writes the object's state durably (src/ft). Throws CheckpointError (file, reason) or
  // SerializationError (the class's serialize threw).
  void write(const void* object);
  // After construction on a restart: loads the latest checkpoint into `object`. False when no
  // earlier incarnation wrote one (`expected` false: start from the constructor, whatever file
  // an earlier run left under the key); throws CheckpointError or Error (naming the file) when
  // it cannot be trusted, or is missing: an actor_checkpoint_dir this host does not see.
  bool restore(void* object, bool expected = false);
  // True once, after the first successful write (the creator is told: a restart must find it).
  bool take_first_write() { return std::exchange(first_write_, false); }
  // The call at `seq` of `caller` completed before the checkpoint this actor was restored from.
  bool completed(int caller, uint64_t seq) const;
  // Its result, if the checkpoint kept it; null otherwise.
  const std::vector<char>* result_of(int caller, uint64_t seq) const;

  const std::filesystem::path& file() const { return file_; }
  uint64_t calls() const { return state_.calls; }

 private:
  std::filesystem::path file_;
  std::string class_name_;
  const detail::ClassEntry* cls_;
  CheckpointPolicy policy_;
  CheckpointState state_;  // object bytes empty between writes
  uint64_t since_ = 0;     // calls since the last write
  bool written_ = false, first_write_ = false;
  std::chrono::steady_clock::time_point last_write_;
};

}  // namespace weft::core
