// The executing side: work arrives (kSubmitTask, or this rank's own), waits in the gate
// (exec_gate.hpp) until this rank has the resources it needs, and runs on the pool or inline
// (loop_turns.cpp); its result goes back to its owner.
#include <cxxabi.h>

#include <cstring>
#include <typeinfo>

#include "common/log.hpp"
#include "common/timeline.hpp"
#include "core/event_loop.hpp"
#include "core/exec_context.hpp"
#include "core/invoke.hpp"
#include "core/pg_wire.hpp"
#include "core/submit_wire.hpp"
#include "weft/detail/registry.hpp"

namespace weft::core {

ExecContext*& current_exec() {
  thread_local ExecContext* ctx = nullptr;
  return ctx;
}

namespace {

std::string demangle(const char* name) {
  int status = 0;
  char* s = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && s ? s : name;
  std::free(s);
  return out;
}

}  // namespace

detail::ErrorInfo current_exception_error(int rank, const std::string& function) {
  detail::ErrorInfo e;
  try {
    throw;
  } catch (const TaskError& t) {  // a nested task failed and the body let it through
    e.type_name = t.type_name();
    e.message = t.message();
  } catch (const std::exception& x) {
    e.type_name = demangle(typeid(x).name());
    e.message = x.what();
  } catch (...) {
    e.type_name = "unknown exception";
    e.message = "(not derived from std::exception)";
  }
  e.kind = detail::ErrorKind::kTask;
  e.rank = rank;
  e.function = function;
  return e;
}

detail::ErrorInfo invoke_registered(int rank, uint64_t fn_id, void* self,
                                    const detail::CallArgs& args, ExecContext ctx,
                                    serde::Buffer& out, const char* what,
                                    std::vector<detail::StatePtr>* contained,
                                    const std::string& name) {
  const detail::FunctionEntry* fe = detail::find_function(fn_id);
  if (!fe) {
    detail::ErrorInfo e;
    e.kind = detail::ErrorKind::kGeneric;
    e.rank = rank;
    e.message = std::string(what) + " id " + std::to_string(fn_id) + " is not registered on rank " +
                std::to_string(rank) +
                " (every rank must run the same binary, with WEFT_REMOTE for it)";
    return e;
  }
  ctx.function = fe->name.c_str();
  timeline::Span span(self ? timeline::Kind::kActorCall : timeline::Kind::kTask, fn_id, 0, name);
  ExecContext* prev = current_exec();
  current_exec() = &ctx;
  // Made in place (no move of its three strings per task).
  detail::ErrorInfo e = [&] {
    // Refs serialized into the result (and any the body serializes by hand; tasks it submits
    // and values it puts collect their own): the result's receiver borrows them.
    detail::RefCollector collect(contained);
    const std::string label = name.empty() ? std::string() : task_label(fe->name, name);
    return run_guarded(rank, name.empty() ? fe->name : label,  // no copy of the name per task
                       [&] { fe->invoke(self, args, out); });
  }();
  current_exec() = prev;
  if (contained) detail::dedupe_refs(*contained);
  return e;
}

void EventLoop::handle_submit_task(int src, const char* data, size_t len) {
  WireReader r(data, len);
  auto item = std::make_unique<ExecItem>(get_submit_header(r));
  item->holds = accept_refs(get_ref_ids(r));  // refs nested in the arguments: borrowed here
  auto [p, n] = r.rest();
  item->args.assign(p, p + n);
  enqueue_exec(std::move(item));
}

void EventLoop::enqueue_exec(ExecItemPtr item) {
  if (item->kind == ExecItem::Kind::kTask && fetch_stored_args(item)) return;  // pinned first
  queue_exec(std::move(item));
}

void EventLoop::queue_exec(ExecItemPtr item) {
  gate_.push(std::move(item));
  start_ready_exec();
}

void EventLoop::start_ready_exec() {
  // Until nothing more may start: an actor creation whose actor died meanwhile gives its
  // resources back at once, which may admit more.
  ExecItemPtr item;
  bool rejected = false;
  while (gate_.take_next(&item, &rejected)) {
    if (rejected)
      reject_exec(std::move(item));
    else
      start_exec(std::move(item));
  }
}

void EventLoop::start_exec(ExecItemPtr item_ptr) {
  ExecItem& item = *item_ptr;
  if (item.kind == ExecItem::Kind::kActorCreate) {
    auto it = actors_.find(item.rare->actor);
    if (it == actors_.end() || it->second->state == ActorInstance::State::kDead) {
      // the gate admitted it already
      gate_release(item.need, item.rare->placement, item.rare->grant);
      return;
    }
    ActorInstance& a = *it->second;
    a.held = item.need;
    a.placement = item.rare->placement;
    a.grant = item.rare->grant;
    pool_.submit([this, item_ptr = std::move(item_ptr), ckpt = a.incarnation > 0 ? a.ckpt : nullptr,
                  incarnation = a.incarnation, expect = a.expect_checkpoint] {
      const ExecItem& item = *item_ptr;
      const detail::ClassEntry* ce = detail::find_class(item.fn_id);
      std::shared_ptr<void> obj;
      std::string name = ce ? ce->name : "class #" + std::to_string(item.fn_id);
      detail::ErrorInfo e;
      if (!ce) {
        e.kind = detail::ErrorKind::kGeneric;
        e.message = "actor class id " + std::to_string(item.fn_id) + " is not registered on rank " +
                    std::to_string(rank_) + " (do all ranks run the same binary?)";
      } else {
        ExecContext ctx{0, ce->name.c_str()};
        ctx.placement = &item.rare->placement;
        timeline::Span span(timeline::Kind::kActorCreate, item.fn_id);
        ExecContext* prev = current_exec();
        current_exec() = &ctx;
        e = run_guarded(rank_, name + " constructor",
                        [&] { obj = ce->construct(call_args(item.args)); });
        current_exec() = prev;
      }
      // A restart: the state of its latest checkpoint, loaded into the new object. A checkpoint
      // that cannot be trusted kills the actor with the reason: never a silent fresh start.
      std::string restore_error;
      if (ckpt && e.kind == detail::ErrorKind::kNone) {
        try {
          if (ckpt->restore(obj.get(), expect))
            WEFT_LOG(Info) << "actor " << item.rare->actor.str() << " restart " << incarnation
                           << " on rank " << rank_ << ": state restored from "
                           << ckpt->file().string() << " (" << ckpt->calls() << " calls)";
          else
            WEFT_LOG(Info) << "actor " << item.rare->actor.str() << " restart " << incarnation
                           << ": no checkpoint yet, state from the constructor";
        } catch (const std::exception& x) {
          restore_error = "its restart " + std::to_string(incarnation) + " on rank " +
                          std::to_string(rank_) + " could not restore its state: " + x.what();
        }
      }
      post([id = item.rare->actor, obj = std::move(obj), e = std::move(e),
            restore_error = std::move(restore_error)](EventLoop& l) mutable {
        if (!restore_error.empty()) {
          auto it = l.actors_.find(id);
          if (it != l.actors_.end()) l.kill_local_actor(*it->second, restore_error);
          return;
        }
        l.actor_created(id, std::move(obj), std::move(e));
      });
    });
    return;
  }
  const ObjectId ret = item.ret;
  const uint64_t fn_id = item.fn_id;
  auto job = [this, item_ptr = std::move(item_ptr)]() mutable {
    ExecItem& item = *item_ptr;
    serde::Buffer out;
    // A task in a bundle keeps its slot while blocked: lending it would let plain work in.
    const PgContext* placement = item.rare.has_value() ? &item.rare->placement : nullptr;
    ExecContext ctx{placement && placement->pg ? 0 : item.need.get(sched::ResourceName::cpu()), "",
                    item.depth};
    ctx.placement = placement;
    DirectResult direct{item.ret};  // a large result goes straight into the store
    ctx.direct = &direct;
    std::vector<StatePtr> contained;
    const auto t0 = std::chrono::steady_clock::now();
    detail::ErrorInfo e =
        invoke_registered(rank_, item.fn_id, nullptr, call_args(item.args, item.pins), ctx, out,
                          "function", &contained, item.rare->name);
    bool ok = e.kind == detail::ErrorKind::kNone;
    std::vector<char> value = out.take();
    const int64_t stored =
        store_result(item.ret, direct, value, ok, e);  // large values: node store
    if (!ok) contained.clear();
    note_body(item.fn_id, t0);
    // The error travels only when there is one: three strings moved twice per task otherwise.
    std::unique_ptr<detail::ErrorInfo> err;
    if (!ok) err = std::make_unique<detail::ErrorInfo>(std::move(e));
    run_or_post([item_ptr = std::move(item_ptr), ok, value = std::move(value), err = std::move(err),
                 stored, contained = std::move(contained)](EventLoop& l) mutable {
      static const detail::ErrorInfo kNoError;
      l.finish_task(*item_ptr, ok, std::move(value), err ? *err : kNoError, stored,
                    std::move(contained));
    });
  };
  // On the admitting thread when allowed (loop_turns.cpp), else the pool.
  run_task_job(std::move(job), ret, fn_id);
}

void EventLoop::finish_task(const ExecItem& item, bool ok, std::vector<char> value,
                            const detail::ErrorInfo& err, int64_t stored,
                            std::vector<StatePtr> contained) {
  gate_release(item.need, item.rare->placement, item.rare->grant);
  if (stored >= 0)
    send_stored_result(item.owner, item.ret, static_cast<size_t>(stored), std::move(contained));
  else
    send_result(item.owner, item.ret, ok, std::move(value), err, std::move(contained));
  start_ready_exec();
}

void EventLoop::send_result(int owner, const ObjectId& ret, bool ok, std::vector<char> value,
                            const detail::ErrorInfo& err, std::vector<StatePtr> contained) {
  if (owner == rank_) {
    on_result(rank_, ret, ok, value.data(), value.size(), err, nullptr, std::move(contained),
              &value);
    return;
  }
  MessageScratch::Lease lease(scratch_);
  serde::Buffer& b = lease.buffer();
  WireWriter w(b);
  w.put<ObjectId>(ret);
  w.put<uint8_t>(ok ? 1 : 0);
  if (ok) {
    put_ref_ids(w, contained);  // the owner borrows the refs inside its result
    w.put_bytes(value.data(), value.size());
  } else {
    contained.clear();
    put_error(w, err);
  }
  send_with_refs(owner, Msg::kTaskResult, b, std::move(contained));
}

void EventLoop::release_cpu(double cpus) {
  gate_.lend_cpu(cpus);
  start_ready_exec();
}

void EventLoop::acquire_cpu(double cpus) { gate_.reclaim_cpu(cpus); }

}  // namespace weft::core
