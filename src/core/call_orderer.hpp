// Per-caller ordering of actor calls: each caller numbers its calls to one actor from 0, and the
// host runs them in that order whatever order they arrive in (messages from one rank arrive in
// order, but a handle passed to another rank makes a second caller, and a call held at its
// caller for a ref argument leaves later than the next). No I/O: the actor host feeds it
// (actor_host.cpp); tests drive it directly (tests/unit/core/call_orderer_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <utility>

namespace weft::core {

template <class Call>
class CallOrderer {
 public:
  // Takes `call`, position `seq` of `caller`; appends to `ready`, in order, every call of that
  // caller that can now run. A position already passed (a duplicate) is dropped: false.
  bool accept(int caller, uint64_t seq, Call call, std::deque<Call>& ready) {
    Order& o = callers_[caller];
    if (seq < o.next || o.early.count(seq)) return false;
    if (seq != o.next) {
      o.early.emplace(seq, std::move(call));
      ++held_;
      return true;
    }
    ready.push_back(std::move(call));
    ++o.next;
    for (auto it = o.early.begin(); it != o.early.end() && it->first == o.next;) {
      ready.push_back(std::move(it->second));
      it = o.early.erase(it);
      --held_;
      ++o.next;
    }
    return true;
  }

  // The caller's ordered positions start at `seq` (an actor restarted: the caller's earlier
  // positions went to the previous incarnation). Calls held below `seq` are dropped, and every
  // held call that can now run is appended to `ready`. A `seq` already passed changes nothing.
  void start_at(int caller, uint64_t seq, std::deque<Call>& ready) {
    Order& o = callers_[caller];
    if (seq <= o.next) return;
    o.next = seq;
    for (auto it = o.early.begin(); it != o.early.end() && it->first < seq;) {
      it = o.early.erase(it);
      --held_;
    }
    for (auto it = o.early.begin(); it != o.early.end() && it->first == o.next;) {
      ready.push_back(std::move(it->second));
      it = o.early.erase(it);
      --held_;
      ++o.next;
    }
  }

  // Calls waiting for a predecessor, over all callers.
  size_t held() const { return held_; }

  // Hands every held call to `f` (the actor died: they fail) and forgets them.
  template <class F>
  void drain(F&& f) {
    for (auto& [caller, o] : callers_) {
      for (auto& [seq, c] : o.early) f(c);
      o.early.clear();
    }
    held_ = 0;
  }

 private:
  struct Order {
    uint64_t next = 0;
    std::map<uint64_t, Call> early;  // arrived before their predecessors
  };
  std::unordered_map<int, Order> callers_;
  size_t held_ = 0;
};

}  // namespace weft::core
