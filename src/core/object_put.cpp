// put() into the node store, reads that pin store objects only while they are read, and the
// store's figures for tests and tools (include/weft/detail/store_api.hpp).
#include <cstring>

#include "common/timeline.hpp"
#include "core/event_loop.hpp"
#include "core/inline_budget.hpp"
#include "core/object_store_client.hpp"
#include "core/object_transfer.hpp"
#include "weft/detail/store_api.hpp"
#include "weft/errors.hpp"

namespace weft::detail {

std::shared_ptr<const Payload> read_payload(const ObjectState& s) {
  return core::open_payload(s.payload);
}

StatePtr put_sized(size_t size, void (*fill)(char*, const void*), const void* ctx) {
  core::EventLoop* l = core::current_loop();
  if (!l) {
    throw Error(
        "Weft is not running: call weft::run(argc, argv, driver) or create a "
        "weft::Runtime first");
  }
  timeline::Span span(timeline::Kind::kPut, 0, size);
  core::ObjectStoreClient* c = core::store_client();
  auto s = core::new_state(ObjectId{l->rank(), 0, l->next_object_seq()});
  if (!c || size <= c->inline_threshold()) {
    s->payload = core::owned_payload(s->id, size, fill, ctx);  // inline within the owner's limit
  } else {
    s->payload = c->put_primary(s->id, size, fill, ctx);
  }
  // Complete before publishing in the table, so a borrower's request never sees it pending.
  s->status_.store(ObjectStatus::kReady, std::memory_order_release);
  l->objects().insert(s);
  return s;
}

bool put_result_direct(size_t size, void (*fill)(char*, const void*), const void* ctx) {
  core::ExecContext* x = core::current_exec();
  if (!x || !x->direct) return false;
  core::ObjectStoreClient* c = core::store_client();
  if (!c || size <= c->inline_threshold()) return false;
  core::DirectResult& d = *x->direct;
  x->direct = nullptr;  // one result per call
  try {
    d.stored = static_cast<int64_t>(c->store().put_result(d.ret, size, fill, ctx));
  } catch (const std::exception& e) {
    d.error = core::result_store_error(d.ret, size, e);
  }
  return true;
}

StoreInfo local_store_info() {
  StoreInfo i;
  core::ObjectStoreClient* c = core::store_client();
  if (!c) return i;
  store::StoreStats st = c->store().stats();
  i.segment_base = reinterpret_cast<uintptr_t>(c->store().base());
  i.segment_size = c->store().segment_size();
  i.capacity = st.capacity;
  i.used = st.used;
  i.primary_bytes = st.primary_bytes;
  i.secondary_bytes = st.secondary_bytes;
  i.spilled_bytes = st.spilled_bytes;
  i.fallback_bytes = st.fallback_bytes;
  i.num_objects = st.num_objects;
  i.spills = st.spills;
  i.restores = st.restores;
  i.evictions = st.evictions;
  i.inline_threshold = c->inline_threshold();
  const core::InlineBudget& b = core::inline_budget();
  i.inline_limit = b.limit();
  i.inline_bytes = b.used();
  i.inline_peak = b.peak();
  i.inline_moved = b.moved_to_store();
  return i;
}

}  // namespace weft::detail
