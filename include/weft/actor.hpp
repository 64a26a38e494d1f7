// Actors: stateful objects that live on one rank. Calls from one caller run in submission order.
//   auto c = weft::actor<Counter>(0).options({.name = "ctr"}).remote();
//   weft::ObjectRef<int> x = c.task(&Counter::incr).remote(5);
#pragma once

#include <optional>
#include <string>

#include "weft/detail/call_args.hpp"
#include "weft/detail/registry.hpp"

namespace weft {

template <class T>
class ActorHandle;

template <class T, class M>
class MethodCaller {
 public:
  using Traits = detail::FunctionTraits<M>;
  MethodCaller(detail::ActorRef a, M m) : actor_(a), m_(m) {}
  template <class... A>
  detail::ResultRef<typename Traits::Result> remote(A&&... args) const {
    uint64_t id = detail::function_id_of(m_);
    auto encoded = detail::encode_args<typename Traits::Args>(std::forward<A>(args)...);
    return detail::ResultRef<typename Traits::Result>(
        detail::submit_actor_call(actor_, id, std::move(encoded)));
  }

 private:
  detail::ActorRef actor_;
  M m_;
};

template <class T>
class ActorHandle {
 public:
  ActorHandle() = default;
  explicit ActorHandle(detail::ActorRef r) : ref_(r) {}

  // A call of method `m` (registered with WEFT_REMOTE(&T::m)).
  template <class M>
  MethodCaller<T, M> task(M m) const {
    static_assert(std::is_same_v<typename detail::FunctionTraits<M>::Class, T> ||
                      std::is_base_of_v<typename detail::FunctionTraits<M>::Class, T>,
                  "method of another class");
    if (!ref_.id.valid()) throw Error("call on an empty ActorHandle");
    if (ref_.rank < 0) ref_.rank = detail::actor_rank_known(ref_);  // straight there once known
    return MethodCaller<T, M>(ref_, m);
  }
  const ActorId& id() const { return ref_.id; }
  // The rank hosting the actor now (after a restart, the new one). remote() returns before the
  // actor is placed, so this may wait for its placement (not its constructor), or for a restart
  // to place it again; ActorDiedError, with the reason, if it never will be.
  int rank() const {
    if (ref_.id.valid()) ref_.rank = detail::actor_rank(ref_);
    return ref_.rank;
  }
  // Ready once the actor is constructed. Fails with ActorDiedError, with the reason, when it
  // never will be: no rank can host it, its group is INFEASIBLE or REMOVED, its name is taken,
  // or its constructor threw. Calls through the handle fail the same way.
  ObjectRef<void> ready() const {
    if (!ref_.id.valid()) throw Error("ready() on an empty ActorHandle");
    return ObjectRef<void>(detail::submit_actor_call(ref_, detail::actor_ready_method(), {}));
  }
  const detail::ActorRef& ref() const { return ref_; }
  bool valid() const { return ref_.id.valid(); }

  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    // Sent with its rank when known here, so the receiver need not ask the creator.
    if (ref_.id.valid() && ref_.rank < 0) ref_.rank = detail::actor_rank_known(ref_);
    uint64_t tag = detail::job_tag();  // as for ObjectRef: a handle names its own job's actor
    ar& ref_.id.creator& ref_.id.seq& ref_.rank& ref_.class_id& ref_.max_restarts&
        ref_.max_task_retries& tag;
    if (Archive::is_loading::value && ref_.id.valid() && tag != detail::job_tag()) {
      const std::string what = ref_.id.str();
      ref_ = detail::ActorRef{};
      detail::throw_foreign_ref(what, tag);
    }
  }

 private:
  mutable detail::ActorRef ref_;  // the rank is filled in once rank() learns it
};

template <class T>
class ActorCreator {
 public:
  explicit ActorCreator(detail::EncodedArgs args) : args_(std::move(args)) {}
  ActorCreator& options(ActorOptions o) {
    opts_ = std::move(o);
    return *this;
  }
  // Returns the handle at once, as in Ray; the actor is placed on a rank with room and
  // constructed there meanwhile. Calls made before construction ends wait for it. Errors of
  // placement and construction surface on every call (ActorDiedError with the reason) and in
  // ActorHandle::ready().
  ActorHandle<T> remote() {
    if (detail::ActorClass<T>::id == 0) detail::throw_class_not_registered(typeid(T));
    if constexpr (!detail::checkpointable<T>) {
      if (opts_.checkpoint_every != 0 || opts_.checkpoint_interval.count() != 0)
        throw Error("ActorOptions::checkpoint_every / checkpoint_interval set for actor class " +
                    detail::class_name(detail::ActorClass<T>::id) +
                    ", which is not serializable: give it a `template <class Archive> void "
                    "serialize(Archive&, unsigned)` member (or free save/load) to checkpoint it");
    }
    return ActorHandle<T>(
        detail::create_actor(detail::ActorClass<T>::id, std::move(args_), detail::to_submit_options(opts_)));
  }

 private:
  detail::EncodedArgs args_;
  ActorOptions opts_;
};

// Starts creating an actor of class T (registered with WEFT_ACTOR(T, ctor args...)).
template <class T, class... A>
ActorCreator<T> actor(A&&... args) {
  if constexpr (!detail::ActorCtor<T>::kRegistered) {
    static_assert(detail::ActorCtor<T>::kRegistered,
                  "weft::actor<T>: T is not an actor class. Declare it once, at global namespace "
                  "scope after the class: WEFT_ACTOR(T, <constructor argument types>), and "
                  "WEFT_REMOTE(&T::method) for each method callers use");
    return ActorCreator<T>(detail::EncodedArgs{});  // not reached: the assertion stops here
  } else {
    using Params = typename detail::ActorCtor<T>::Args;
    return ActorCreator<T>(detail::encode_args<Params>(std::forward<A>(args)...));
  }
}

// The live actor registered under `name`, or nullopt. Throws weft::Error if it is of another class.
template <class T>
std::optional<ActorHandle<T>> get_actor(const std::string& name) {
  auto r = detail::lookup_named_actor(name);
  if (!r) return std::nullopt;
  if (r->class_id != detail::ActorClass<T>::id)
    throw Error("get_actor(\"" + name + "\"): the actor is a " + detail::class_name(r->class_id) +
                ", not the class asked for");
  return ActorHandle<T>(*r);
}

// Writes the actor's checkpoint now, after the calls this caller made before (its state as they
// left it), into the job's checkpoint directory (setting actor_checkpoint_dir). Ready once the
// file is durable (fsynced and renamed); fails with the CheckpointError's text when it cannot be
// written. A restart of the actor (ActorOptions::max_restarts) starts from its latest checkpoint.
template <class T>
ObjectRef<void> checkpoint(const ActorHandle<T>& h) {
  static_assert(detail::checkpointable<T>,
                "weft::checkpoint: the actor class is not serializable; give it a "
                "`template <class Archive> void serialize(Archive&, unsigned)` member");
  if (!h.valid()) throw Error("weft::checkpoint on an empty ActorHandle");
  return ObjectRef<void>(
      detail::submit_actor_call(h.ref(), detail::actor_checkpoint_method(), {}));
}

// Ends the actor: calls already running finish, queued and later calls fail with ActorDiedError.
template <class T>
void kill(const ActorHandle<T>& h) {
  if (!h.valid()) throw Error("weft::kill on an empty ActorHandle");
  detail::kill_actor(h.ref());
}

}  // namespace weft
