// The placement fields that travel with a task submission or an actor creation.
#pragma once

#include "core/exec_context.hpp"
#include "core/wire.hpp"

namespace weft::core {

inline void put_placement(WireWriter& w, const PgContext& p) {
  w.put<uint64_t>(p.pg);
  w.put<int32_t>(p.bundle);
  w.put<uint8_t>(p.capture ? 1 : 0);
}

inline PgContext get_placement(WireReader& r) {
  PgContext p;
  p.pg = r.get<uint64_t>();
  p.bundle = r.get<int32_t>();
  p.capture = r.get<uint8_t>() != 0;
  return p;
}

}  // namespace weft::core
