// Rank 0's directory of named actors: name → the actor's id, host rank and class. Pure state,
// driven by the event loop's messages; it never blocks and never talks to the network itself.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "weft/detail/runtime_api.hpp"

namespace weft::head {

class ActorDirectory {
 public:
  // False (and the existing entry untouched) when the name is taken by a live actor.
  bool add(const std::string& name, const detail::ActorRef& ref);
  std::optional<detail::ActorRef> find(const std::string& name) const;
  // Removes `name` only if it still names `id` (a newer actor may have taken it).
  void remove(const std::string& name, const ActorId& id);
  size_t size() const { return names_.size(); }

 private:
  std::unordered_map<std::string, detail::ActorRef> names_;
};

}  // namespace weft::head
