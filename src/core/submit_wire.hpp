// kSubmitTask: one writer and one reader for a task's header, used by the owner that submits it
// and by a victim that hands a queued task to a thief (work_stealing.cpp). The body is the header,
// the ids of the refs inside the arguments (borrow_table.hpp) and the argument block.
#pragma once

#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/event_loop.hpp"
#include "core/wire.hpp"

namespace weft::core {

// The header's fixed fields as one block: one append, where a dozen small ones cost about 60
// instructions each (a std::vector range insert and a memcpy call). Explicit sizes and no
// padding, so every byte sent is a field's.
struct SubmitFixed {
  ObjectId ret;
  uint64_t fn_id;
  uint64_t pg;
  uint32_t depth;
  int32_t bundle;
  int32_t node;       // the strategy's node
  uint32_t need_len;  // bytes of the resource request that follow
  uint32_t name_len;  // bytes of TaskOptions::name after them
  uint8_t policy;
  uint8_t soft;
  uint8_t capture;
  uint8_t unused;
};
static_assert(sizeof(SubmitFixed) == 56 && std::is_trivially_copyable_v<SubmitFixed>);

inline void put_submit_header(WireWriter& w, const ExecItem& t) {
  // The demand's bytes. Tasks of a burst share their demand, so the last one encoded on this
  // thread is kept with its set, and an equal set (a compare of name pointers and amounts) reuses
  // them: encoding (a varint and a name per entry) cost about 300 instructions a task. The string
  // is reused besides: a demand of two names is longer than a short string holds inline.
  thread_local std::string need;
  thread_local sched::ResourceSet need_of;
  thread_local bool encoded = false;
  if (!encoded || !(t.need == need_of)) {
    encoded = false;  // until both are written: a failed allocation keeps no half of the pair
    need.clear();
    t.need.append_bytes(&need);
    need_of = t.need;
    encoded = true;
  }
  SubmitFixed f;
  f.ret = t.ret;
  f.fn_id = t.fn_id;
  const PgContext& placement = t.rare->placement;
  const std::string& name = t.rare->name;
  f.pg = placement.pg;
  f.depth = t.depth;
  f.bundle = placement.bundle;
  f.node = t.strategy.node;
  f.need_len = static_cast<uint32_t>(need.size());
  f.name_len = static_cast<uint32_t>(name.size());
  f.policy = static_cast<uint8_t>(t.strategy.policy);
  f.soft = t.strategy.soft ? 1 : 0;
  f.capture = placement.capture ? 1 : 0;
  f.unused = 0;
  w.put(f);
  w.put_bytes(need.data(), need.size());
  if (!name.empty()) w.put_bytes(name.data(), name.size());
}

// The demand's bytes → its set. Tasks of a burst share their demand, so the last set decoded on
// this thread is kept and the same bytes give a copy of it: decoding (a name lookup per entry)
// would cost about 250 instructions a task.
inline sched::ResourceSet decode_need(std::string_view bytes) {
  thread_local std::string last_bytes;
  thread_local sched::ResourceSet last;
  if (!bytes.empty() && bytes.size() == last_bytes.size() &&
      std::memcmp(bytes.data(), last_bytes.data(), bytes.size()) == 0)
    return last;
  sched::ResourceSet need = sched::ResourceSet::from_bytes(bytes);  // throws: nothing kept
  last_bytes.clear();  // matches nothing until both are written (a failed allocation)
  last = need;
  last_bytes.assign(bytes);
  return need;
}

inline ExecItem get_submit_header(WireReader& r) {
  const auto f = r.get<SubmitFixed>();
  if (f.policy > static_cast<uint8_t>(sched::Policy::kNodeAffinity))
    throw SerializationError("unknown scheduling policy " + std::to_string(f.policy));
  ExecItem t;
  t.kind = ExecItem::Kind::kTask;
  t.ret = f.ret;
  t.owner = t.ret.owner;
  t.fn_id = f.fn_id;
  t.depth = f.depth;
  t.need = decode_need(r.get_view(f.need_len));
  t.strategy.policy = static_cast<sched::Policy>(f.policy);
  t.strategy.node = f.node;
  t.strategy.soft = f.soft != 0;
  const std::string_view name = r.get_view(f.name_len);
  if (f.pg != 0 || f.bundle != -1 || f.capture != 0 || !name.empty()) {  // most tasks: none
    ExecRare& rare = t.rare.mut();
    rare.placement.pg = f.pg;
    rare.placement.bundle = f.bundle;
    rare.placement.capture = f.capture != 0;
    rare.name.assign(name.data(), name.size());
  }
  return t;
}

}  // namespace weft::core
