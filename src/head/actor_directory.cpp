#include "head/actor_directory.hpp"

namespace weft::head {

bool ActorDirectory::add(const std::string& name, const detail::ActorRef& ref) {
  return names_.emplace(name, ref).second;
}

std::optional<detail::ActorRef> ActorDirectory::find(const std::string& name) const {
  auto it = names_.find(name);
  if (it == names_.end()) return std::nullopt;
  return it->second;
}

void ActorDirectory::remove(const std::string& name, const ActorId& id) {
  auto it = names_.find(name);
  if (it != names_.end() && it->second.id == id) names_.erase(it);
}

}  // namespace weft::head
