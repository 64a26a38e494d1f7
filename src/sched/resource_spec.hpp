// Resource specs as users write them in configuration (--weft-resources / WEFT_RESOURCES):
//   "CPU=2;GPU=1;1-3:special=1;0:memory=4G"
// Items are separated by ';'. An item "name=amount" applies to every rank; a prefix "a-b:" or
// "a:" restricts it to a rank range. Later items override earlier ones for the same name, so a
// global default followed by per-rank overrides reads naturally.
#pragma once

#include <string>
#include <string_view>

#include "sched/resource_set.hpp"

namespace weft::sched {

// Returns the set that applies to `rank`. Throws weft::ConfigError quoting the offending item.
// Amounts are decimals ≥ 0; "memory" and "object_store_memory" also take K/M/G/T suffixes.
ResourceSet parse_resource_spec(const std::string& spec, int rank);
// True when `spec` sets `name` for `rank`, to any amount — zero included, which the parsed set
// cannot show ("GPU=0" turns detected GPUs off).
bool resource_spec_sets(const std::string& spec, int rank, std::string_view name);

}  // namespace weft::sched
