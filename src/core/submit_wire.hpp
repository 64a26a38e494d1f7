// kSubmitTask: one writer and one reader for a task's header, used by the owner that submits it
// and by a victim that hands a queued task to a thief (work_stealing.cpp). The body is the header,
// the ids of the refs inside the arguments (borrow_table.hpp) and the argument block.
#pragma once

#include "core/event_loop.hpp"
#include "core/pg_wire.hpp"

namespace weft::core {

inline void put_submit_header(WireWriter& w, const ExecItem& t) {
  w.put<ObjectId>(t.ret);
  w.put<uint64_t>(t.fn_id);
  w.put<uint32_t>(t.depth);
  w.put_str(t.need.to_bytes());
  put_placement(w, t.placement);
  w.put<uint8_t>(static_cast<uint8_t>(t.strategy.policy));
  w.put<int32_t>(t.strategy.node);
  w.put<uint8_t>(t.strategy.soft ? 1 : 0);
  w.put_str(t.name);
}

inline ExecItem get_submit_header(WireReader& r) {
  ExecItem t;
  t.kind = ExecItem::Kind::kTask;
  t.ret = r.get<ObjectId>();
  t.owner = t.ret.owner;
  t.fn_id = r.get<uint64_t>();
  t.depth = r.get<uint32_t>();
  t.need = sched::ResourceSet::from_bytes(r.get_str());
  t.placement = get_placement(r);
  const auto policy = r.get<uint8_t>();
  if (policy > static_cast<uint8_t>(sched::Policy::kNodeAffinity))
    throw SerializationError("unknown scheduling policy " + std::to_string(policy));
  t.strategy.policy = static_cast<sched::Policy>(policy);
  t.strategy.node = r.get<int32_t>();
  t.strategy.soft = r.get<uint8_t>() != 0;
  t.name = r.get_str();
  return t;
}

}  // namespace weft::core
