// The runtime's message bodies (src/core/wire.hpp and the decoders beside it): WireReader and
// the pure readers the handlers call -- get_error, get_ref_ids (borrow_table.hpp),
// get_submit_header (submit_wire.hpp), get_placement (pg_wire.hpp), ResourceSet::from_bytes
// (sched), ArgReader (the argument block after a call's header) -- composed in the order the
// handlers read them (message_handlers.cpp routes to them; the handlers themselves are
// EventLoop members and need a running loop). Input: one byte choosing the message, then its
// body (starting with the wire version, as on the wire).
#include <cstring>

#include "core/borrow_table.hpp"
#include "core/pg_wire.hpp"
#include "core/submit_wire.hpp"
#include "fuzz_harness.hpp"
#include "sched/resource_set.hpp"
#include "weft/detail/arg_block.hpp"

namespace {

using namespace weft;
using namespace weft::core;

enum Body : uint8_t {
  kSubmitTask,    // executor.cpp handle_submit_task
  kTaskResult,    // submitter.cpp handle_task_result / handle_object_value (same layout)
  kActorPlaced,   // unplaced_actors.cpp handle_actor_placed
  kCreateActor,   // actor_host.cpp handle_create_actor
  kActorCall,     // actor_host.cpp handle_actor_call
  kResources,     // a ResourceSet alone (runtime.cpp: every rank's resources at bootstrap)
  kNumBodies
};

volatile size_t g_sink;

// The argument block that ends a call's body: every entry must lie inside the body.
void walk_args(WireReader& r) {
  auto [p, n] = r.rest();
  detail::ArgReader args(p, n);
  size_t total = 0;
  while (!args.done()) {
    const detail::ArgEntry e = args.next();
    if (e.tag == detail::ArgTag::kInline) {
      WEFT_FUZZ_CHECK(e.data >= p && e.size <= n && e.data + e.size <= p + n);
      for (uint64_t i = 0; i < e.size; ++i) total += static_cast<unsigned char>(e.data[i]);
    }
  }
  g_sink = total;
}

void check_error(const detail::ErrorInfo& e) {
  // A failure carries a kind that names an error; kNone would read as success downstream.
  WEFT_FUZZ_CHECK(e.kind != detail::ErrorKind::kNone);
  WEFT_FUZZ_CHECK(static_cast<uint8_t>(e.kind) <= static_cast<uint8_t>(detail::ErrorKind::kStoreFull));
}

void decode(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const char* p = reinterpret_cast<const char*>(data + 1);
  const size_t n = size - 1;
  switch (data[0] % kNumBodies) {
    case kSubmitTask: {
      WireReader r(p, n);
      ExecItem t = get_submit_header(r);
      WEFT_FUZZ_CHECK(t.strategy.policy <= sched::Policy::kNodeAffinity);
      (void)get_ref_ids(r);
      walk_args(r);
      return;
    }
    case kTaskResult: {
      WireReader r(p, n);
      (void)r.get<ObjectId>();
      if (r.get<uint8_t>() != 0) {
        (void)get_ref_ids(r);
        auto [bytes, len] = r.rest();
        g_sink = len ? static_cast<unsigned char>(bytes[len - 1]) : 0;
      } else {
        check_error(get_error(r));
      }
      return;
    }
    case kActorPlaced: {
      WireReader r(p, n);
      (void)r.get<ActorId>();
      (void)r.get<int32_t>();
      if (r.get<uint8_t>() != 0) check_error(get_error(r));
      return;
    }
    case kCreateActor: {
      WireReader r(p, n);
      (void)r.get<ActorId>();
      (void)r.get<uint64_t>();
      (void)r.get<int32_t>();
      (void)sched::ResourceSet::from_bytes(r.get_str());
      (void)get_placement(r);
      (void)r.get_str();
      (void)get_ref_ids(r);
      walk_args(r);
      return;
    }
    case kActorCall: {
      WireReader r(p, n);
      (void)r.get<ActorId>();
      (void)r.get<uint64_t>();
      (void)r.get<uint64_t>();
      (void)r.get<ObjectId>();
      if (r.get<uint8_t>() == 0) (void)get_ref_ids(r);
      walk_args(r);
      return;
    }
    default: {
      const sched::ResourceSet rs = sched::ResourceSet::from_bytes(std::string_view(p, n));
      const std::string again = rs.to_bytes();
      WEFT_FUZZ_CHECK(sched::ResourceSet::from_bytes(again) == rs);
      WEFT_FUZZ_CHECK(sched::ResourceSet::from_bytes(again).to_bytes() == again);
      return;
    }
  }
}

// ---- seeds: the senders' writers -------------------------------------------------------------

fuzz::Seed body(const std::string& name, Body kind, const serde::Buffer& b) {
  std::vector<char> out{static_cast<char>(kind)};
  out.insert(out.end(), b.data(), b.data() + b.size());
  return {name, std::move(out)};
}

std::vector<StatePtr> refs(int n) {
  std::vector<StatePtr> v;
  for (int i = 0; i < n; ++i)
    v.push_back(std::make_shared<detail::ObjectState>(ObjectId{1, 0, uint64_t(100 + i)}));
  return v;
}

void args(serde::Buffer& b) {
  detail::ArgWriter w(b);
  w.inline_value("\x07\x00\x00\x00", 4);
  w.stored(detail::StoredArg{ObjectId{2, 0, 9}, 3, 1 << 20});
  const size_t at = w.begin_inline();
  b.append("payload", 7);
  w.end_inline(at);
}

detail::ErrorInfo error() {
  detail::ErrorInfo e;
  e.kind = detail::ErrorKind::kTask;
  e.rank = 3;
  e.type_name = "std::runtime_error";
  e.message = "boom";
  e.function = "add";
  return e;
}

std::vector<fuzz::Seed> seeds() {
  std::vector<fuzz::Seed> out;
  {
    ExecItem t;
    t.ret = ObjectId{0, 0, 17};
    t.fn_id = 0x1234567890abcdefull;
    t.depth = 2;
    t.need = sched::ResourceSet{{"CPU", 1}, {"GPU", 0.5}};
    t.rare.mut().placement = PgContext{5, 1, true, {}};
    t.strategy = Strategy{sched::Policy::kNodeAffinity, 2, true};
    t.rare.mut().name = "named_task";
    serde::Buffer b;
    WireWriter w(b);
    put_submit_header(w, t);
    put_ref_ids(w, refs(2));
    args(b);
    out.push_back(body("submit_task", kSubmitTask, b));
    serde::Buffer plain;
    WireWriter w2(plain);
    put_submit_header(w2, ExecItem{});
    put_ref_ids(w2, {});
    out.push_back(body("submit_task_plain", kSubmitTask, plain));
  }
  {
    serde::Buffer b;
    WireWriter w(b);
    w.put<ObjectId>(ObjectId{0, 0, 17});
    w.put<uint8_t>(1);
    put_ref_ids(w, refs(1));
    w.put_bytes("\x2a\x00\x00\x00", 4);
    out.push_back(body("task_result_ok", kTaskResult, b));
    serde::Buffer e;
    WireWriter we(e);
    we.put<ObjectId>(ObjectId{0, 0, 18});
    we.put<uint8_t>(0);
    put_error(we, error());
    out.push_back(body("task_result_error", kTaskResult, e));
  }
  {
    serde::Buffer b;
    WireWriter w(b);
    w.put<ActorId>(ActorId{0, 0, 4});
    w.put<int32_t>(-1);
    w.put<uint8_t>(1);
    detail::ErrorInfo e = error();
    e.kind = detail::ErrorKind::kActorDied;
    put_error(w, e);
    out.push_back(body("actor_placed_failed", kActorPlaced, b));
    serde::Buffer ok;
    WireWriter wo(ok);
    wo.put<ActorId>(ActorId{0, 0, 5});
    wo.put<int32_t>(2);
    wo.put<uint8_t>(0);
    out.push_back(body("actor_placed", kActorPlaced, ok));
  }
  {
    serde::Buffer b;
    WireWriter w(b);
    w.put<ActorId>(ActorId{1, 0, 6});
    w.put<uint64_t>(77);
    w.put<int32_t>(4);
    w.put_str(sched::ResourceSet{{"CPU", 2}, {"memory", 1024}}.to_bytes());
    put_placement(w, PgContext{9, 0, false, {}});
    w.put_str("counter");
    put_ref_ids(w, refs(3));
    args(b);
    out.push_back(body("create_actor", kCreateActor, b));
  }
  {
    serde::Buffer b;
    WireWriter w(b);
    w.put<ActorId>(ActorId{1, 0, 6});
    w.put<uint64_t>(3);
    w.put<uint64_t>(88);
    w.put<ObjectId>(ObjectId{1, 0, 200});
    w.put<uint8_t>(0);
    put_ref_ids(w, refs(1));
    args(b);
    out.push_back(body("actor_call", kActorCall, b));
  }
  {
    const std::string rs = sched::ResourceSet{{"CPU", 16}, {"GPU", 4}, {"special", 0.25}}.to_bytes();
    serde::Buffer b;
    b.append(rs.data(), rs.size());
    out.push_back(body("resources", kResources, b));
  }
  return out;
}

}  // namespace

WEFT_FUZZ_TARGET(seeds, decode)
