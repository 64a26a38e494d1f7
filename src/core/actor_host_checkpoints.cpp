// The host's side of actor checkpoints: which actors get a checkpointer (a serializable class
// with checkpoint options, or one its creator may restart, or one weft::checkpoint(handle) asks
// for), the folder they write to, and the answer to a call that a restored checkpoint contains.
// The write itself runs after each call, on the call's thread (pump_actor, actor_host.cpp); the
// restore right after the constructor of a restart (start_exec, executor.cpp).
#include <cstdlib>
#include <system_error>
#include <tuple>

#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/invoke.hpp"
#include "core/object_store_client.hpp"
#include "ft/checkpoint_file.hpp"
#include "weft/detail/registry.hpp"

namespace weft::core {

const std::filesystem::path& EventLoop::actor_checkpoint_dir() {
  if (!checkpoint_dir_.empty()) return checkpoint_dir_;
  std::string dir = cfg_.get("actor_checkpoint_dir", "");
  if (dir.empty()) {  // in the session directory, which the store's close removes with them
    const ObjectStoreClient* c = store_client();
    if (!c) throw Error("rank " + std::to_string(rank_) + ": actor checkpoints need the runtime");
    dir = c->job_dir() + "/checkpoints";
  }
  checkpoint_dir_ = dir;
  std::error_code ec;
  std::filesystem::create_directories(checkpoint_dir_, ec);
  if (ec)  // every write will then fail with a CheckpointError naming the file
    WEFT_LOG(Error) << "rank " << rank_ << ": cannot create actor_checkpoint_dir " << dir << ": "
                    << ec.message();
  return checkpoint_dir_;
}

std::shared_ptr<ActorCheckpointer> EventLoop::make_checkpointer(const ActorInstance& a,
                                                                bool restartable) {
  const detail::ClassEntry* ce = detail::find_class(a.class_id);
  if (!ce || !ce->save_state) return nullptr;  // not serializable: restarts use the constructor
  if (!a.policy.on() && !restartable) return nullptr;
  // One call at a time: a checkpoint is the state between two calls, and the checkpointer is
  // used by the call's thread without a lock (api.cpp refuses checkpoint options otherwise).
  if (a.max_concurrency != 1) return nullptr;
  const std::string key = a.name.empty() ? a.id.str() : a.name;
  return std::make_shared<ActorCheckpointer>(ft::checkpoint_path(actor_checkpoint_dir(), key),
                                             ce->name, ce, a.policy);
}

void EventLoop::reply_completed_before(const ActorInstance& a, const ActorCallItem& c) {
  if (const std::vector<char>* value = a.ckpt->result_of(c.caller, c.seq)) {
    send_result(c.ret.owner, c.ret, true, *value, {});  // the result the checkpoint kept
    return;
  }
  detail::ErrorInfo e;
  e.kind = detail::ErrorKind::kActorDied;
  e.rank = rank_;
  const detail::FunctionEntry* fe = detail::find_function(c.method);
  e.function = fe ? fe->name : "";
  e.message = "the call at position " + std::to_string(c.seq) + " from rank " +
              std::to_string(c.caller) + " to actor " + detail::class_name(a.class_id) + " " +
              a.id.str() + " completed before its rank failed: its effect is in the checkpoint " +
              a.ckpt->file().string() + " the actor was restored from on rank " +
              std::to_string(rank_) +
              ", its result (not kept: large, holding refs, or older than the 8 latest of that "
              "caller) was lost with that rank, and it is not run twice";
  send_result(c.ret.owner, c.ret, false, {}, e);
}

// The built-in calls of whole-job checkpoints (weft/job_checkpoint.hpp), on the call's thread: the
// class's own serializer, as for actor checkpoints, but the bytes travel as the call's result or
// argument instead of to a file.
detail::ErrorInfo EventLoop::run_state_call(uint64_t class_id, int max_concurrency,
                                            const ActorCallItem& c, void* object,
                                            serde::Buffer& out) {
  const bool save = c.method == detail::actor_state_method();
  return run_guarded(rank_, save ? "JobCheckpoint::save" : "JobRestore::actor", [&] {
    const detail::ClassEntry* cls = detail::find_class(class_id);
    if (!cls || !cls->save_state || !cls->load_state)
      throw Error("actor class " + detail::class_name(class_id) +
                  " is not serializable, so its state cannot be saved or restored");
    if (max_concurrency > 1)  // as for actor checkpoints: other calls would run meanwhile
      throw Error("actor class " + detail::class_name(class_id) + " runs " +
                  std::to_string(max_concurrency) +
                  " calls at once (max_concurrency): its state is saved and restored between two "
                  "calls, which needs max_concurrency = 1");
    if (save) {
      serde::Buffer state;
      cls->save_state(object, state);
      serde::encode(out, state.take());
      return;
    }
    std::tuple<std::vector<char>> args;
    std::vector<std::shared_ptr<const detail::Payload>> keep;
    detail::decode_args(call_args(c.args, c.pins), args, std::index_sequence<0>{}, keep);
    const std::vector<char>& state = std::get<0>(args);
    serde::Reader in(state.data(), state.size());
    cls->load_state(object, in);
    if (!in.done())
      throw SerializationError("the saved state of actor class " + detail::class_name(class_id) +
                               " has " + std::to_string(state.size() - in.position()) +
                               " bytes left over after its state was read: it is not this "
                               "class's state as this build serializes it");
  });
}

}  // namespace weft::core
