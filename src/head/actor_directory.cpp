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

bool ActorDirectory::update(const std::string& name, const detail::ActorRef& ref) {
  auto it = names_.find(name);
  if (it == names_.end() || !(it->second.id == ref.id)) return false;
  it->second = ref;
  return true;
}

std::vector<std::string> ActorDirectory::drop_host(int rank) {
  std::vector<std::string> gone;
  for (auto it = names_.begin(); it != names_.end();) {
    const detail::ActorRef& a = it->second;
    if (a.rank == rank && (a.max_restarts == 0 || a.id.creator == rank)) {
      gone.push_back(it->first);
      it = names_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

}  // namespace weft::head
