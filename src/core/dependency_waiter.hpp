// Dependency resolution at the submitter: a call is held until every ref argument it waits for
// is done (ready or failed), then handed back, without blocking any thread. No I/O: the
// submitter asks owners for borrowed values and feeds completions in (submitter.cpp); tests
// drive it directly (tests/unit/core/dependency_waiter_test.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <unordered_map>
#include <vector>

#include "weft/detail/ids.hpp"

namespace weft::core {

template <class Call>
class DependencyWaiter {
 public:
  // Holds `call` until every id in `pending` is done; an id listed twice must be done once.
  // With nothing pending the call comes straight back; else the result is empty.
  std::unique_ptr<Call> hold(std::unique_ptr<Call> call, const std::vector<ObjectId>& pending) {
    if (pending.empty()) return call;
    Call* key = call.get();
    Held& h = held_[key];
    h.call = std::move(call);
    for (const ObjectId& id : pending) {
      auto& waiters = waiting_on_[id];
      if (!waiters.empty() && waiters.back() == key) continue;  // f(a, a): once
      waiters.push_back(key);
      ++h.missing;
    }
    return nullptr;
  }

  // `id` is done: the calls it was the last missing dependency of, in the order they were held.
  std::vector<std::unique_ptr<Call>> done(const ObjectId& id) {
    std::vector<std::unique_ptr<Call>> ready;
    auto it = waiting_on_.find(id);
    if (it == waiting_on_.end()) return ready;
    std::vector<Call*> calls = std::move(it->second);
    waiting_on_.erase(it);
    for (Call* c : calls) {
      auto h = held_.find(c);
      if (h == held_.end() || --h->second.missing > 0) continue;
      ready.push_back(std::move(h->second.call));
      held_.erase(h);
    }
    return ready;
  }

  size_t held() const { return held_.size(); }
  bool waits_for(const ObjectId& id) const { return waiting_on_.count(id) > 0; }
  // Each held call with the dependencies it still waits for (job_state_snapshot.cpp).
  template <class F>
  void for_each_held(F&& f) const {
    std::unordered_map<const Call*, std::vector<ObjectId>> missing;
    for (const auto& [id, calls] : waiting_on_)
      for (const Call* c : calls) missing[c].push_back(id);
    for (const auto& [c, h] : held_) f(*h.call, missing[c]);
  }

 private:
  struct Held {
    std::unique_ptr<Call> call;
    int missing = 0;
  };
  std::unordered_map<ObjectId, std::vector<Call*>> waiting_on_;  // dependency → calls
  std::unordered_map<Call*, Held> held_;
};

}  // namespace weft::core
