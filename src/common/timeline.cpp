#include "common/timeline.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

#include "common/spin_lock.hpp"

namespace weft::timeline {
namespace {

std::atomic<bool> g_enabled{true};
std::atomic<size_t> g_capacity{16384};

struct Ring {
  SpinLock mu;  // its thread's, per span; a reader's only while it copies the ring out
  uint32_t tid = 0;
  std::string name;
  std::unique_ptr<Event[]> slots;  // made when its thread is named or first records
  uint64_t cap = 0;
  uint64_t head = 0;         // spans ever recorded
  uint64_t cleared = 0;      // head at the last clear()
  bool free = false;         // its thread ended: the next new thread takes it over
};

// Rings outlive their threads (a finished thread's spans stay readable); the registry owns them.
std::mutex g_rings_mu;
std::vector<std::shared_ptr<Ring>>& rings() {
  static std::vector<std::shared_ptr<Ring>> r;
  return r;
}

// A thread's hold on its ring. A new thread takes over the ring of one that ended (its spans
// stay until overwritten), so a program that starts threads over and over keeps a bounded
// number of rings: as many as it ever ran at once.
struct Holder {
  std::shared_ptr<Ring> ring;
  Holder() {
    std::lock_guard<std::mutex> g(g_rings_mu);
    for (const auto& r : rings()) {
      std::lock_guard<SpinLock> rg(r->mu);
      if (r->free) {
        r->free = false;
        r->name.clear();
        if (r->cap != g_capacity.load(std::memory_order_relaxed)) {  // resized: start afresh
          r->slots.reset();
          r->cap = 0;
          r->head = r->cleared = 0;
        }
        ring = r;
        return;
      }
    }
    ring = std::make_shared<Ring>();
    ring->tid = static_cast<uint32_t>(rings().size());
    rings().push_back(ring);
  }
  ~Holder() {
    std::lock_guard<SpinLock> g(ring->mu);
    ring->free = true;
  }
};

void make_slots(Ring& r) {
  r.cap = g_capacity.load(std::memory_order_relaxed);
  r.slots = std::make_unique_for_overwrite<Event[]>(r.cap);
}

Ring& my_ring() {
  thread_local Holder mine;
  return *mine.ring;
}

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kTask: return "task";
    case Kind::kActorCall: return "actor call";
    case Kind::kActorCreate: return "actor create";
    case Kind::kGet: return "get";
    case Kind::kPut: return "put";
    case Kind::kWait: return "wait";
    case Kind::kTransfer: return "transfer";
    case Kind::kSpill: return "spill";
    case Kind::kRestore: return "restore";
    case Kind::kCheckpoint: return "checkpoint";
  }
  return "event";
}

void configure(bool on, size_t events_per_thread) {
  g_capacity.store(std::max<size_t>(16, events_per_thread), std::memory_order_relaxed);
  g_enabled.store(on, std::memory_order_relaxed);
}

bool enabled() { return g_enabled.load(std::memory_order_relaxed); }

void name_thread(std::string_view name) {
  Ring& r = my_ring();
  std::lock_guard<SpinLock> g(r.mu);
  if (r.name.empty()) r.name = name;
  // The runtime's threads name themselves when they start: their ring is made then, not in the
  // middle of their first span.
  if (!r.slots && enabled()) make_slots(r);
}

void record(Kind kind, uint64_t start_ns, uint64_t end_ns, uint64_t id, uint64_t arg,
            std::string_view label) {
  if (!enabled()) return;
  Ring& r = my_ring();
  std::lock_guard<SpinLock> g(r.mu);
  if (!r.slots) make_slots(r);
  Event& e = r.slots[r.head % r.cap];
  e.start_ns = start_ns;
  e.dur_ns = end_ns > start_ns ? end_ns - start_ns : 0;
  e.id = id;
  e.arg = arg;
  e.kind = kind;
  const size_t n = std::min(label.size(), sizeof e.label - 1);
  if (n) std::memcpy(e.label, label.data(), n);  // an empty view's data() may be null
  e.label[n] = '\0';
  ++r.head;
}

std::vector<Track> collect() {
  std::vector<std::shared_ptr<Ring>> all;
  {
    std::lock_guard<std::mutex> g(g_rings_mu);
    all = rings();
  }
  std::vector<Track> out;
  for (const auto& r : all) {
    std::lock_guard<SpinLock> g(r->mu);
    Track t;
    t.tid = r->tid;
    t.name = r->name.empty() ? "thread " + std::to_string(r->tid) : r->name;
    const uint64_t cap = r->cap;
    const uint64_t live = r->head - r->cleared;
    const uint64_t n = std::min<uint64_t>(live, cap);
    t.dropped = live - n;
    t.events.reserve(n);
    for (uint64_t i = r->head - n; i < r->head; ++i) t.events.push_back(r->slots[i % cap]);
    if (!t.events.empty()) out.push_back(std::move(t));
  }
  return out;
}

size_t touched_bytes() {
  std::lock_guard<std::mutex> g(g_rings_mu);
  size_t bytes = 0;
  for (const auto& r : rings()) {
    std::lock_guard<SpinLock> rg(r->mu);
    bytes += static_cast<size_t>(std::min(r->head, r->cap)) * sizeof(Event);
  }
  return bytes;
}

void clear() {
  std::lock_guard<std::mutex> g(g_rings_mu);
  for (const auto& r : rings()) {
    std::lock_guard<SpinLock> rg(r->mu);
    r->cleared = r->head;
  }
}

}  // namespace weft::timeline
