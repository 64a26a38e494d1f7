#include "sched/resource_name.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace weft::sched {
namespace {

// The first kFast names are also listed in an array that readers scan without a lock: a job's
// names are few, and a scan comparing lengths first beats hashing them. Later names (a job with
// very many custom resources) are found through the map, under the lock.
class NameTable {
 public:
  static constexpr uint32_t kFast = 32;

  NameTable() { intern(std::string_view()); }

  const ResourceName::Node* intern(std::string_view text) {
    const uint32_t listed = listed_.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < listed; ++i) {
      const ResourceName::Node* n = fast_[i].load(std::memory_order_relaxed);
      // The empty name's data() may be null, which memcmp must never be given.
      if (n->text.size() == text.size() &&
          (text.empty() || std::memcmp(n->text.data(), text.data(), text.size()) == 0))
        return n;
    }
    std::lock_guard lock(mu_);
    if (auto it = by_text_.find(text); it != by_text_.end()) return it->second;
    const auto id = static_cast<uint32_t>(nodes_.size());
    const ResourceName::Node* n = &nodes_.emplace_back(ResourceName::Node{std::string(text), id});
    by_text_.emplace(n->text, n);
    if (id < kFast) {
      fast_[id].store(n, std::memory_order_relaxed);
      listed_.store(id + 1, std::memory_order_release);
    }
    count_.store(id + 1, std::memory_order_release);
    return n;
  }

  uint32_t count() const { return count_.load(std::memory_order_acquire); }

 private:
  std::array<std::atomic<const ResourceName::Node*>, kFast> fast_{};
  std::atomic<uint32_t> listed_{0};
  std::atomic<uint32_t> count_{0};
  std::mutex mu_;
  std::deque<ResourceName::Node> nodes_;  // stable addresses; guarded by mu_
  std::unordered_map<std::string_view, const ResourceName::Node*> by_text_;  // guarded by mu_
};

NameTable& table() {
  static NameTable* t = new NameTable;  // never destroyed: sets in static objects may outlive it
  return *t;
}

}  // namespace

ResourceName::ResourceName() {
  static const Node* const empty = table().intern(std::string_view());
  node_ = empty;
}

ResourceName::ResourceName(std::string_view text) : node_(table().intern(text)) {}

ResourceName ResourceName::cpu() {
  static const ResourceName name("CPU");
  return name;
}

ResourceName ResourceName::gpu() {
  static const ResourceName name("GPU");
  return name;
}

uint32_t ResourceName::count() { return table().count(); }

}  // namespace weft::sched
