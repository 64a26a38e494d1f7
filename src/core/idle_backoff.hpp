// IdleBackoff: what a thread that polls for work does while none comes (the loop thread, a thread
// blocked in get() driving the loop's turns, a pool thread relieving the loop): spin, then yield
// the core, then park, by the time since its last work (loop_spin_us, loop_yield_us).
//
// Spinning pays only while the thread has a core to itself. When the core is shared (4 ranks on 2
// cores, or any other busy thread of the machine), a spinning waiter keeps the very thread it
// waits for off the core until its spin ends: two ranks doing sync task round trips, sharing one
// core while something else held the other, took 108 µs a round trip (each side spun its 50 µs
// before the other ran) against 2.4 µs on a core each. A yield tells the two cases apart: it
// returns at once (0.6 µs here) when no other thread wants the core, and only after the other
// thread's run when one does. So every yield that ran another thread halves the spin phase, and
// every one that did not doubles it back towards loop_spin_us. The park still comes at
// loop_spin_us + loop_yield_us after the last work, so a waiter on a shared core yields for longer
// instead of spinning.
//
// One per thread; no I/O, unit-tested in tests/unit/core/idle_backoff_test.cpp.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace weft::core {

class IdleBackoff {
 public:
  using Ns = std::chrono::nanoseconds;
  enum class Step { kSpin, kYield, kPark };

  // A yield at least this long ran another thread on this core meanwhile. An uncontended yield
  // is a system call: well under a microsecond on Linux, 0.6 µs under gVisor.
  static constexpr Ns kHandedOver{5'000};
  // The step by which a spin phase that fell to zero grows back.
  static constexpr Ns kRegrow{1'000};

  constexpr IdleBackoff() = default;
  IdleBackoff(Ns spin_for, Ns yield_for) { configure(spin_for, yield_for); }

  // Sets loop_spin_us and loop_yield_us. The settings may differ from one runtime to the next in
  // a process: the spin phase learnt so far is kept, within the new bound.
  void configure(Ns spin_for, Ns yield_for) {
    spin_for_ = std::max(spin_for, Ns(0));
    yield_until_ = spin_for_ + std::max(yield_for, Ns(0));
    if (!configured_ || spin_ > spin_for_) spin_ = spin_for_;
    configured_ = true;
  }

  Step step(Ns idle) const {
    if (idle < spin_) return Step::kSpin;
    return idle < yield_until_ ? Step::kYield : Step::kPark;
  }

  // A yield that took `took`.
  void yielded(Ns took) {
    if (took >= kHandedOver) {
      spin_ = spin_ / 2 < kRegrow ? Ns(0) : spin_ / 2;
    } else {
      spin_ = std::min(spin_for_, spin_ * 2 + kRegrow);
    }
  }

  // Yields the core, and learns from how long that took.
  void yield() {
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::yield();
    yielded(std::chrono::steady_clock::now() - t0);
  }

  Ns spin_phase() const { return spin_; }

  // The calling thread's own (a pool thread may both relieve the loop and wait in get(): one
  // core, one lesson), set to these settings.
  static IdleBackoff& this_thread(Ns spin_for, Ns yield_for) {
    thread_local IdleBackoff b;
    b.configure(spin_for, yield_for);
    return b;
  }

 private:
  Ns spin_for_{0}, yield_until_{0}, spin_{0};
  bool configured_ = false;
};

}  // namespace weft::core
