// The timeline: what each thread of this process did, as spans in a bounded ring per thread, for
// `weft timeline` (docs/operations.md, "Timeline"). Recording is a lock of the thread's own ring
// (uncontended: only a reader collecting it takes it too), two clock reads and one 64-byte slot;
// a full ring overwrites its oldest spans. Any module may record (store spills, core tasks);
// collect() copies every ring for the control socket. No I/O here.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weft::timeline {

enum class Kind : uint8_t {
  kTask = 1,       // a task body ran (id: function id)
  kActorCall = 2,  // an actor method ran (id: method id)
  kActorCreate = 3,
  kGet = 4,        // a get() waited for its values (arg: how many)
  kPut = 5,        // put() (arg: bytes)
  kWait = 6,       // wait() (arg: how many refs)
  kTransfer = 7,   // an object copied from another node (id: from rank, arg: bytes)
  kSpill = 8,      // a primary written to its spill file (arg: bytes)
  kRestore = 9,    // a spilled object read back (arg: bytes)
  kCheckpoint = 10,  // an actor's state written (arg: bytes)
};
const char* kind_name(Kind k);

// Trivial on purpose: a ring's slots are left uninitialised until a span is written there, so
// a new ring costs neither a 1 MiB zeroing nor its pages before they are used.
struct Event {
  uint64_t start_ns;  // steady clock
  uint64_t dur_ns;
  uint64_t id;   // what the kind says (a function id, a rank)
  uint64_t arg;  // bytes or a count
  Kind kind;
  char label[31];  // a task's TaskOptions::name, cut to fit, NUL-terminated
};

// Off: record() returns at once. `events_per_thread`: the ring's size (at least 16).
void configure(bool enabled, size_t events_per_thread);
bool enabled();
inline uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// This thread's name on its track ("pool", "loop", "driver", "spill I/O"); first call wins.
void name_thread(std::string_view name);
void record(Kind kind, uint64_t start_ns, uint64_t end_ns, uint64_t id = 0, uint64_t arg = 0,
            std::string_view label = {});

// A span from construction to destruction, recorded when the timeline is on.
class Span {
 public:
  Span(Kind kind, uint64_t id = 0, uint64_t arg = 0, std::string_view label = {})
      : start_(enabled() ? now_ns() : 0), kind_(kind), id_(id), arg_(arg), label_(label) {}
  ~Span() {
    if (start_) record(kind_, start_, now_ns(), id_, arg_, label_);
  }
  void set_arg(uint64_t a) { arg_ = a; }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  uint64_t start_;
  Kind kind_;
  uint64_t id_, arg_;
  std::string_view label_;
};

struct Track {
  uint32_t tid = 0;  // this process's track number, in the order threads first recorded
  std::string name;
  std::vector<Event> events;  // oldest first
  uint64_t dropped = 0;       // overwritten when the ring was full
};
// Every thread's ring, copied; each ring is locked only while it is copied.
std::vector<Track> collect();
// Drops every recorded span (tests and benchmarks).
void clear();
// Bytes of this process's ring slots that spans have been written to: what the rings add to the
// RSS, since a ring's pages are first touched as it fills. At most timeline_events x 64 B per
// thread that ever recorded; clear() does not lower it (the pages stay).
size_t touched_bytes();

}  // namespace weft::timeline
