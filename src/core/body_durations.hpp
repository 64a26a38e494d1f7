// How long each registered function's bodies ran lately on this rank, so that the loop thread can
// run a body it knows to be short right after its turn without waking a pool thread to keep the
// loop turning meanwhile (loop_turns.cpp). That wake is most of a remote task's round trip on a
// machine where a futex wake costs tens of µs.
//
// The estimate is a decaying maximum: a long run raises it at once, each shorter run lowers it by
// an eighth, so a function that is sometimes long stays "long" for a few dozen calls after it.
// Lock-free (bodies end on any thread); a race between two updates of one function loses one of
// them, which only delays the estimate by a call. A fixed table of `slots` functions: a function
// past that stays unknown, which the caller treats as long (the safe side).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace weft::core {

class BodyDurations {
 public:
  static constexpr uint64_t kUnknown = UINT64_MAX;

  explicit BodyDurations(size_t slots = 1024);

  void record(uint64_t fn_id, uint64_t ns);
  // The estimate in ns; kUnknown for a function never recorded (or with no room left).
  uint64_t estimate_ns(uint64_t fn_id) const;

 private:
  struct Slot {
    std::atomic<uint64_t> key{0};  // fn_id (0 is stored as 1: the empty key is 0)
    std::atomic<uint64_t> est_ns{kUnknown};
  };
  const Slot* find(uint64_t key) const;

  size_t mask_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace weft::core
