// Identifiers. An ObjectId names its owner (the rank whose code created the ref) and a sequence
// number unique within that owner, so the object directory shards by owner with no coordination.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace weft {

struct ObjectId {
  int32_t owner = -1;    // rank that owns the object's metadata
  uint32_t kind = 0;     // 0: object, other values reserved for internal reply slots
  uint64_t seq = 0;      // unique per owner

  bool valid() const { return owner >= 0; }
  friend bool operator==(const ObjectId&, const ObjectId&) = default;
  friend auto operator<=>(const ObjectId&, const ObjectId&) = default;
  std::string str() const {
    return "obj(" + std::to_string(owner) + ":" + std::to_string(seq) + ")";
  }
};
static_assert(sizeof(ObjectId) == 16);

struct ActorId {
  int32_t creator = -1;  // rank that created the actor
  uint32_t pad = 0;
  uint64_t seq = 0;
  bool valid() const { return creator >= 0; }
  friend bool operator==(const ActorId&, const ActorId&) = default;
  std::string str() const {
    return "actor(" + std::to_string(creator) + ":" + std::to_string(seq) + ")";
  }
};
static_assert(sizeof(ActorId) == 16);

}  // namespace weft

template <>
struct std::hash<weft::ObjectId> {
  size_t operator()(const weft::ObjectId& id) const noexcept {
    uint64_t h = id.seq * 0x9E3779B97F4A7C15ull ^ (uint64_t(uint32_t(id.owner)) << 32 | id.kind);
    return static_cast<size_t>(h ^ (h >> 29));
  }
};
template <>
struct std::hash<weft::ActorId> {
  size_t operator()(const weft::ActorId& id) const noexcept {
    uint64_t h = id.seq * 0x9E3779B97F4A7C15ull ^ uint64_t(uint32_t(id.creator)) << 32;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};
