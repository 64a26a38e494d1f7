// ResourceName: a resource's name, interned once per process. Two names are equal when they are
// the same object, so the comparisons every task's demand goes through (the submitter's slot
// view, the executor's gate) are one pointer compare instead of a string compare, and a
// ClusterView finds a name's column by its dense id.
//
// Names are never freed: a job knows a handful (CPU, GPU, memory, its custom resources), and a
// name lives as long as any set may hold it. The table is the only shared state of this module;
// interning a name already known reads it without a lock.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace weft::sched {

class ResourceName {
 public:
  ResourceName();  // the empty name
  explicit ResourceName(std::string_view text);

  const std::string& str() const { return node_->text; }
  // Reads as its text wherever a string is wanted (messages, logs, maps keyed by text).
  operator const std::string&() const { return node_->text; }
  // Dense, from 0, in the order names were first interned in this process (not across ranks).
  uint32_t id() const { return node_->id; }
  // The names every task's path asks for, interned once.
  static ResourceName cpu();  // "CPU"
  static ResourceName gpu();  // "GPU"
  // How many names this process has interned: every id() is below it.
  static uint32_t count();

  friend bool operator==(ResourceName a, ResourceName b) { return a.node_ == b.node_; }
  friend bool operator==(ResourceName a, std::string_view b) { return a.str() == b; }
  // By text, so sets keep the order (and the wire form) they had with plain strings.
  friend std::strong_ordering operator<=>(ResourceName a, ResourceName b) {
    if (a.node_ == b.node_) return std::strong_ordering::equal;
    return a.str().compare(b.str()) <=> 0;
  }

  struct Node {
    std::string text;
    uint32_t id;
  };

 private:
  const Node* node_;
};

}  // namespace weft::sched
