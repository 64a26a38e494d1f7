// Rank 0's directory of named actors: name → the actor's id, host rank and class. Pure state,
// driven by the event loop's messages; it never blocks and never talks to the network itself.
// It follows an actor's restarts (its creator's kNameUpdate) and forgets actors that died for
// good (kNameRelease from the host or the creator; drop_host when the host rank failed).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/detail/runtime_api.hpp"

namespace weft::head {

class ActorDirectory {
 public:
  // False (and the existing entry untouched) when the name is taken by a live actor.
  bool add(const std::string& name, const detail::ActorRef& ref);
  std::optional<detail::ActorRef> find(const std::string& name) const;
  // Removes `name` only if it still names `id` (a newer actor may have taken it).
  void remove(const std::string& name, const ActorId& id);
  // The actor `name` names was restarted (its creator says so): the entry follows it to
  // `ref.rank`. False, and nothing changed, when the name names another actor or none.
  bool update(const std::string& name, const detail::ActorRef& ref);
  // `rank` failed: the names of actors that lived there and will not come back (no restarts,
  // or their creator, which restarts them, died with it) are removed and returned. Restartable
  // ones stay: their creator updates or releases them.
  std::vector<std::string> drop_host(int rank);
  size_t size() const { return names_.size(); }

 private:
  std::unordered_map<std::string, detail::ActorRef> names_;
};

}  // namespace weft::head
