// Registration of remote functions, actor classes and actor methods. Every rank runs the same
// binary, so a registration made at static-initialisation time exists on every rank under the
// same name; the wire carries a 64-bit hash of that name. A function pointer is found locally
// by its bytes (addresses differ between processes, names do not).
//
// A name is the text inside WEFT_REMOTE(...) / WEFT_ACTOR(...), so `scale` registered in two
// namespaces, or two file-local classes both called `Counter`, would share one id and one would
// silently run for the other. Such collisions (and two names whose hashes collide) are recorded
// at registration, each side with its demangled symbol and its file:line, and weft::run /
// weft::Runtime refuse to start with a ConfigError that names both (check_registrations).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "weft/detail/arg_block.hpp"
#include "weft/detail/function_traits.hpp"
#include "weft/detail/store_api.hpp"
#include "weft/serialization.hpp"
#include "weft/view.hpp"

namespace weft::detail {

// Runs a registered function: decodes the arguments from `args` (arg_block.hpp), calls it,
// encodes its result into `out`. `self` is the actor instance for methods, null for free
// functions.
using Invoker = void (*)(void* self, const CallArgs& args, serde::Buffer& out);
// Constructs an actor from encoded constructor arguments.
using Constructor = std::shared_ptr<void> (*)(const CallArgs& args);
// An actor's state to bytes and back into a constructed object (checkpoints); null when the class
// is not serializable.
using StateSaver = void (*)(const void* self, serde::Buffer& out);
using StateLoader = void (*)(void* self, serde::Reader& in);

struct FunctionEntry {
  uint64_t id = 0;
  std::string name;  // as written in WEFT_REMOTE(...): the id is its hash
  Invoker invoke = nullptr;
  uint64_t is_method = 0;  // 1 for actor methods
  std::string symbol;      // demangled, e.g. "int alpha::scale(int)"; empty if unknown
  std::string site;        // where the WEFT_REMOTE stands, "file:line"; empty if unknown
};
struct ClassEntry {
  uint64_t id = 0;
  std::string name;  // as written in WEFT_ACTOR(...)
  Constructor construct = nullptr;
  StateSaver save_state = nullptr;  // set when the class is serializable (checkpointable<T>)
  StateLoader load_state = nullptr;
  std::string symbol;  // demangled class name
  std::string site;
};

// What a registration macro knows about the thing it registers, for errors naming it.
struct RegistrationSource {
  const char* pretty = "";               // the registrar's __PRETTY_FUNCTION__ (names F)
  const std::type_info* type = nullptr;  // the function pointer's type, or the actor class
  const char* file = "";
  int line = 0;
};

uint64_t hash_name(std::string_view name);
uint64_t register_function(const void* key, size_t key_len, std::string name, Invoker invoke,
                           uint64_t is_method, const RegistrationSource& source = {});
uint64_t register_class(std::string name, Constructor construct,
                        const RegistrationSource& source = {}, StateSaver save = nullptr,
                        StateLoader load = nullptr);
// Lookups; null when not registered.
const FunctionEntry* find_function(uint64_t id);
const FunctionEntry* find_function_by_key(const void* key, size_t key_len);
const ClassEntry* find_class(uint64_t id);
// For errors: "int alpha::scale(int) (WEFT_REMOTE(scale) at a.cpp:12)", or "function id N"
// when this rank has nothing registered under `id`.
std::string describe_function(uint64_t id);
// Registrations that cannot all hold, one line each naming both sides; empty when none.
std::vector<std::string> registration_conflicts();
// Throws ConfigError listing registration_conflicts(); the runtime calls it before starting.
void check_registrations();
[[noreturn]] void throw_not_registered(const char* what);
// function_id_of's error: names the function by its symbol where the binary's symbol table has
// it, else by its type.
[[noreturn]] void throw_function_not_registered(const void* key, size_t key_len,
                                                const std::type_info& type);
// The same for an actor class T never given a WEFT_ACTOR: names it, demangled.
[[noreturn]] void throw_class_not_registered(const std::type_info& type);

// The bytes of argument `index` (named for errors): the reader's next entry, inline or the
// pinned stored value it names (`*next_pin` counts the kStored entries read so far).
std::pair<const char*, size_t> arg_bytes(ArgReader& in, const CallArgs& args, size_t index,
                                         size_t* next_pin,
                                         std::shared_ptr<const Payload>* pin = nullptr);
[[noreturn]] void throw_arg_decode_error(size_t index, const char* function, const char* why);
const char* current_function_name();

// A view parameter's value: the bytes where they lie (in the store, or inside the block, which
// lives for the call); `pin` keeps a stored value in place while the view lives. Stored values
// start 8-byte aligned; an inline entry's elements may not be aligned for E inside the block,
// and are then copied (they are small: at most inline_threshold) to memory that is.
// `keep` holds what a span (which owns nothing) points into until the call returns.
template <class P>
P view_arg(const char* p, size_t n, std::shared_ptr<const Payload> pin,
           std::vector<std::shared_ptr<const Payload>>& keep) {
  using E = typename view_param<P>::element;
  if (!pin) {
    if (reinterpret_cast<uintptr_t>(p + sizeof(uint64_t)) % alignof(E) == 0)
      pin = std::make_shared<BorrowedBytes>(p, n);
    else
      pin = std::make_shared<InlinePayload>(std::vector<char>(p, p + n));  // new: 16-aligned
  }
  View<E> v = detail_make_view<E>(pin, nullptr);
  if constexpr (std::is_same_v<P, View<E>>) {
    return v;
  } else {
    keep.push_back(std::move(pin));  // a span: valid for the call
    return v.span();
  }
}

template <class Tuple, size_t... I>
void decode_args(const CallArgs& call, Tuple& args, std::index_sequence<I...>,
                 std::vector<std::shared_ptr<const Payload>>& keep) {
  ArgReader in(call.data, call.size);
  [[maybe_unused]] size_t next_pin = 0;
  (
      [&] {
        using P = std::tuple_element_t<I, Tuple>;
        std::shared_ptr<const Payload> pin;
        auto [p, n] = arg_bytes(in, call, I, &next_pin, view_param<P>::value ? &pin : nullptr);
        try {
          if constexpr (view_param<P>::value)
            std::get<I>(args) = view_arg<P>(p, n, std::move(pin), keep);
          else
            std::get<I>(args) = serde::from_bytes<P>(p, n);
        } catch (const std::exception& e) {
          throw_arg_decode_error(I, current_function_name(), e.what());
        }
      }(),
      ...);
}

// Results of at least this many bytes whose encoding is their bytes try put_result_direct
// (store_api.hpp); smaller ones, whose copy costs less than the call, never do.
inline constexpr size_t kDirectResultMinBytes = 4096;

// A body's result into `out`, or, when large and directly encodable, into the node store.
template <class R>
void encode_result(serde::Buffer& out, const R& r) {
  if constexpr (direct_encoding<R>::value) {
    const size_t size = direct_encoding<R>::size(r);
    if (size >= kDirectResultMinBytes && put_result_direct(size, &direct_encoding<R>::fill, &r))
      return;
  }
  serde::encode(out, r);
}

template <auto F>
void invoke_function(void* self, const CallArgs& in, serde::Buffer& out) {
  using T = FunctionTraits<decltype(F)>;
  typename T::Args args;
  std::vector<std::shared_ptr<const Payload>> keep;  // what span parameters point into
  decode_args(in, args, std::make_index_sequence<T::arity>{}, keep);
  if constexpr (std::is_void_v<typename T::Result>) {
    std::apply(F, std::move(args));
  } else {
    encode_result(out, std::apply(F, std::move(args)));
  }
}

template <auto M>
void invoke_method(void* self, const CallArgs& in, serde::Buffer& out) {
  using T = FunctionTraits<decltype(M)>;
  using C = typename T::Class;
  typename T::Args args;
  std::vector<std::shared_ptr<const Payload>> keep;  // what span parameters point into
  decode_args(in, args, std::make_index_sequence<T::arity>{}, keep);
  auto call = [self](auto&&... a) -> decltype(auto) {
    return (static_cast<C*>(self)->*M)(std::forward<decltype(a)>(a)...);
  };
  if constexpr (std::is_void_v<typename T::Result>) {
    std::apply(call, std::move(args));
  } else {
    encode_result(out, std::apply(call, std::move(args)));
  }
}

// The class id of actor type T, set by WEFT_ACTOR; 0 when T was never registered.
template <class T>
struct ActorClass {
  static inline uint64_t id = 0;
};
// Constructor argument types of actor type T, declared by WEFT_ACTOR (which also sets
// kRegistered: weft::actor<T> checks it, so a missing WEFT_ACTOR is one clear error).
template <class T>
struct ActorCtor {
  static constexpr bool kRegistered = false;
  using Args = std::tuple<>;
};

template <class T, class... A>
std::shared_ptr<void> construct_actor(const CallArgs& call) {
  std::tuple<std::decay_t<A>...> args;
  std::vector<std::shared_ptr<const Payload>> keep;  // what span parameters point into
  decode_args(call, args, std::make_index_sequence<sizeof...(A)>{}, keep);
  return std::apply([](auto&&... a) { return std::static_pointer_cast<void>(
                                          std::make_shared<T>(std::forward<decltype(a)>(a)...)); },
                    std::move(args));
}

// An actor class whose state can be checkpointed: serializable the way user types are (a
// serialize(Archive&, unsigned) member, a free serialize -- or save/load split by
// BOOST_SERIALIZATION_SPLIT_FREE -- in its namespace or in boost::serialization, or a raw type
// copied as its bytes). Unlike serde's own check, a final class without a public serialize is
// not assumed to have one: most actor classes are not serializable at all, and that is fine.
template <class T>
concept checkpointable = serde::detail::has_serialize_member<T> || serde::is_raw_v<T> ||
                         serde::detail::has_free_serialize<T>;

template <class T>
void save_actor_state(const void* self, serde::Buffer& out) {
  serde::encode(out, *static_cast<const T*>(self));
}
template <class T>
void load_actor_state(void* self, serde::Reader& in) {
  serde::decode(in, *static_cast<T*>(self));
}

#if defined(_MSC_VER) && !defined(__clang__)
#define WEFT_DETAIL_PRETTY_FUNCTION __FUNCSIG__
#else
#define WEFT_DETAIL_PRETTY_FUNCTION __PRETTY_FUNCTION__
#endif

template <class T, class... A>
struct ActorRegistrar {
  explicit ActorRegistrar(const char* name, const char* file = "", int line = 0) {
    StateSaver save = nullptr;
    StateLoader load = nullptr;
    if constexpr (checkpointable<T>) {
      save = &save_actor_state<T>;
      load = &load_actor_state<T>;
    }
    ActorClass<T>::id = register_class(name, &construct_actor<T, A...>,
                                       RegistrationSource{"", &typeid(T), file, line}, save, load);
  }
};

template <auto F>
struct FunctionRegistrar {
  explicit FunctionRegistrar(const char* name, const char* file = "", int line = 0) {
    using T = FunctionTraits<decltype(F)>;
    auto key = F;
    const RegistrationSource source{WEFT_DETAIL_PRETTY_FUNCTION, &typeid(decltype(F)), file, line};
    if constexpr (std::is_void_v<typename T::Class>) {
      register_function(&key, sizeof key, name, &invoke_function<F>, 0, source);
    } else {
      register_function(&key, sizeof key, name, &invoke_method<F>, 1, source);
    }
  }
};

template <class F>
uint64_t function_id_of(F f) {
  const FunctionEntry* e = find_function_by_key(&f, sizeof f);
  if (!e) throw_function_not_registered(&f, sizeof f, typeid(F));
  return e->id;
}

}  // namespace weft::detail

#define WEFT_DETAIL_CAT2(a, b) a##b
#define WEFT_DETAIL_CAT(a, b) WEFT_DETAIL_CAT2(a, b)

// Makes a free function or an actor method callable remotely:
//   WEFT_REMOTE(add);  WEFT_REMOTE(&Counter::incr);
#define WEFT_REMOTE(f)                                                                 \
  static const ::weft::detail::FunctionRegistrar<f> WEFT_DETAIL_CAT(weft_remote_, __COUNTER__) { \
    #f, __FILE__, __LINE__                                                               \
  }

// Makes a class an actor type, with the argument types of the constructor remote callers use:
//   WEFT_ACTOR(Counter, int);   (at global namespace scope)
#define WEFT_ACTOR(T, ...)                                                             \
  template <>                                                                          \
  struct weft::detail::ActorCtor<T> {                                                  \
    static constexpr bool kRegistered = true;                                          \
    using Args = std::tuple<__VA_ARGS__>;                                              \
  };                                                                                   \
  static const ::weft::detail::ActorRegistrar<T __VA_OPT__(, ) __VA_ARGS__> WEFT_DETAIL_CAT( \
      weft_actor_, __COUNTER__) {                                                      \
    #T, __FILE__, __LINE__                                                             \
  }
