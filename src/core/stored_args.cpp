// Arguments on their way from the submitter's refs to the body's parameters (the block's
// format: include/weft/detail/arg_block.hpp).
//
// Submitter: a ref argument whose value is small travels inside the block (kInline); one whose
// value lies in a node store travels as its location (kStored: id, holder, size), so moving the
// task never moves the bytes. The owner keeps the refs until the task's result arrives.
// Executor: each kStored value is opened where it lies on this node, or pulled into this node's
// store first (on the loop, so no pool thread waits on the network), and pinned for the call
// (ExecItem::pins). The body decodes the value straight from the store segment: one copy into a
// by-value parameter, none for a View<E> / std::span<const E> parameter.
#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/invoke.hpp"
#include "core/object_store_client.hpp"
#include "weft/detail/arg_block.hpp"
#include "weft/detail/refcount_api.hpp"

namespace weft::core {

using detail::ArgEntry;
using detail::ArgReader;
using detail::ArgTag;
using detail::ArgWriter;
using detail::StoredArg;

void EventLoop::note_stored_readers(const std::vector<StatePtr>& refs, int reader) {
  // A stored argument travels by location: the copy the reader's node pulls dies with the value.
  for (const auto& r : refs)
    if (auto* sp = dynamic_cast<const StorePayload*>(r->payload.get())) sp->note_reader(reader);
}

std::vector<StatePtr> EventLoop::refs_sent_with(PendingCall& call, int dest) {
  std::vector<StatePtr> holds = std::move(call.contained);
  for (const auto& r : call.refs) add_contained(holds, *r);
  note_stored_readers(call.refs, dest);
  detail::dedupe_refs(holds);
  return holds;
}

std::vector<char> EventLoop::resolve_args(PendingCall& call, bool stored_by_location) {
  if (call.refs.empty()) return std::move(call.args);  // nothing to resolve: no copy
  serde::Buffer out;
  out.reserve(call.args.size());
  ArgWriter w(out);
  ArgReader in(call.args.data(), call.args.size());
  size_t next_ref = 0;
  bool by_location = false;
  while (!in.done()) {
    const ArgEntry e = in.next();
    if (e.tag != ArgTag::kRef) {  // the caller's own block has inline entries and refs only
      w.inline_value(e.data, e.size);
      continue;
    }
    const StatePtr& r = call.refs.at(next_ref++);
    const auto* sp = dynamic_cast<const StorePayload*>(r->payload.get());
    if (stored_by_location && sp) {
      w.stored(StoredArg{r->id, copy_source(*sp), sp->size()});
      by_location = true;
      continue;
    }
    // Pins a store-backed value while it is copied into the block.
    std::shared_ptr<const detail::Payload> p = open_payload(r->payload);
    w.inline_value(p ? p->data() : nullptr, p ? p->size() : 0);
  }
  if (by_location) arg_holds_[call.result->id] = call.refs;
  return out.take();
}

namespace {
std::vector<StoredArg> stored_entries(const std::vector<char>& args) {
  std::vector<StoredArg> stored;
  ArgReader in(args.data(), args.size());
  while (!in.done()) {
    const ArgEntry e = in.next();
    if (e.tag == ArgTag::kStored) stored.push_back(e.stored);
  }
  return stored;
}
}  // namespace

void EventLoop::pin_stored(std::vector<StoredArg> stored, PinnedFn then) {
  struct Fetch {
    std::vector<std::shared_ptr<const detail::Payload>> got;
    size_t missing = 0;
    detail::ErrorInfo error;
    PinnedFn then;
  };
  auto f = std::make_shared<Fetch>();
  f->got.resize(stored.size());
  f->missing = stored.size();
  f->then = std::move(then);
  auto finish = [this, f] {
    ArgPins pins;
    if (f->error.kind == detail::ErrorKind::kNone) {
      try {
        // Pinned (a spilled primary restored) for the call: the body reads them in place.
        pins.reserve(f->got.size());
        for (const auto& p : f->got) pins.push_back(open_payload(p));
      } catch (const std::exception& e) {
        pins.clear();
        f->error = lost_error(rank_, e.what());
      }
    }
    f->got.clear();
    f->then(std::move(pins), std::move(f->error));
  };
  for (size_t i = 0; i < stored.size(); ++i) {
    const StoredArg& a = stored[i];
    pull_object(a.id, a.holder, a.size, /*owner_record=*/false,
                [f, i, finish](std::shared_ptr<const detail::Payload> p, detail::ErrorInfo e) {
                  if (p)
                    f->got[i] = std::move(p);
                  else if (f->error.kind == detail::ErrorKind::kNone)
                    f->error = std::move(e);
                  if (--f->missing == 0) finish();
                });
  }
}

bool EventLoop::fetch_stored_args(ExecItemPtr& item) {
  std::vector<StoredArg> stored = stored_entries(item->args);
  if (stored.empty()) return false;
  // Shared: pin_stored's callback is copyable. Called once; the item leaves it then.
  auto held = std::make_shared<ExecItemPtr>(std::move(item));
  pin_stored(std::move(stored), [this, held](ArgPins pins, detail::ErrorInfo e) {
    ExecItem& it = **held;
    if (e.kind != detail::ErrorKind::kNone) {
      send_result(it.owner, it.ret, false, {}, e);
      return;
    }
    it.pins = std::move(pins);
    it.local_only = true;  // its arguments lie on this node now: not stolen
    queue_exec(std::move(*held));
  });
  return true;
}

bool EventLoop::fetch_stored_args(const ActorId& actor, ActorCallItem& call) {
  std::vector<StoredArg> stored = stored_entries(call.args);
  if (stored.empty()) return false;
  auto held = std::make_shared<ActorCallItem>(std::move(call));
  pin_stored(std::move(stored), [this, actor, held](ArgPins pins, detail::ErrorInfo e) {
    if (e.kind != detail::ErrorKind::kNone) {
      // The call fails; the actor still passes its place in the caller's order.
      send_result(held->ret.owner, held->ret, false, {}, e);
      held->skip = true;
      held->args.clear();
    }
    held->pins = std::move(pins);
    route_call(actor, std::move(*held));
  });
  return true;
}

}  // namespace weft::core
