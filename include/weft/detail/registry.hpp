// Registration of remote functions, actor classes and actor methods. Every rank runs the same
// binary, so a registration made at static-initialisation time exists on every rank under the
// same name; the wire carries a 64-bit hash of that name. A function pointer is found locally
// by its bytes (addresses differ between processes, names do not).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "weft/detail/function_traits.hpp"
#include "weft/serialization.hpp"

namespace weft::detail {

// Runs a registered function: decodes the arguments from `args`, calls it, encodes its result
// into `out`. `self` is the actor instance for methods, null for free functions.
using Invoker = void (*)(void* self, const char* args, size_t args_len, serde::Buffer& out);
// Constructs an actor from encoded constructor arguments.
using Constructor = std::shared_ptr<void> (*)(const char* args, size_t args_len);

struct FunctionEntry {
  uint64_t id = 0;
  std::string name;
  Invoker invoke = nullptr;
  uint64_t is_method = 0;  // 1 for actor methods
};
struct ClassEntry {
  uint64_t id = 0;
  std::string name;
  Constructor construct = nullptr;
};

uint64_t hash_name(std::string_view name);
uint64_t register_function(const void* key, size_t key_len, std::string name, Invoker invoke,
                           uint64_t is_method);
uint64_t register_class(std::string name, Constructor construct);
// Lookups; null when not registered.
const FunctionEntry* find_function(uint64_t id);
const FunctionEntry* find_function_by_key(const void* key, size_t key_len);
const ClassEntry* find_class(uint64_t id);
[[noreturn]] void throw_not_registered(const char* what);

// Decodes argument `index` (named for errors) from the argument block's next entry.
void read_arg_slice(serde::Reader& in, size_t index, const char** data, size_t* len);
[[noreturn]] void throw_arg_decode_error(size_t index, const char* function, const char* why);
const char* current_function_name();

template <class Tuple, size_t... I>
void decode_args(const char* data, size_t len, Tuple& args, std::index_sequence<I...>) {
  serde::Reader in(data, len);
  (
      [&] {
        const char* p;
        size_t n;
        read_arg_slice(in, I, &p, &n);
        try {
          std::get<I>(args) = serde::from_bytes<std::tuple_element_t<I, Tuple>>(p, n);
        } catch (const std::exception& e) {
          throw_arg_decode_error(I, current_function_name(), e.what());
        }
      }(),
      ...);
}

template <auto F>
void invoke_function(void* self, const char* data, size_t len, serde::Buffer& out) {
  using T = FunctionTraits<decltype(F)>;
  typename T::Args args;
  decode_args(data, len, args, std::make_index_sequence<T::arity>{});
  if constexpr (std::is_void_v<typename T::Result>) {
    std::apply(F, std::move(args));
  } else {
    serde::encode(out, std::apply(F, std::move(args)));
  }
}

template <auto M>
void invoke_method(void* self, const char* data, size_t len, serde::Buffer& out) {
  using T = FunctionTraits<decltype(M)>;
  using C = typename T::Class;
  typename T::Args args;
  decode_args(data, len, args, std::make_index_sequence<T::arity>{});
  auto call = [self](auto&&... a) -> decltype(auto) {
    return (static_cast<C*>(self)->*M)(std::forward<decltype(a)>(a)...);
  };
  if constexpr (std::is_void_v<typename T::Result>) {
    std::apply(call, std::move(args));
  } else {
    serde::encode(out, std::apply(call, std::move(args)));
  }
}

// The class id of actor type T, set by WEFT_ACTOR; 0 when T was never registered.
template <class T>
struct ActorClass {
  static inline uint64_t id = 0;
};
// Constructor argument types of actor type T, declared by WEFT_ACTOR.
template <class T>
struct ActorCtor;

template <class T, class... A>
std::shared_ptr<void> construct_actor(const char* data, size_t len) {
  std::tuple<std::decay_t<A>...> args;
  decode_args(data, len, args, std::make_index_sequence<sizeof...(A)>{});
  return std::apply([](auto&&... a) { return std::static_pointer_cast<void>(
                                          std::make_shared<T>(std::forward<decltype(a)>(a)...)); },
                    std::move(args));
}

template <class T, class... A>
struct ActorRegistrar {
  explicit ActorRegistrar(const char* name) {
    ActorClass<T>::id = register_class(name, &construct_actor<T, A...>);
  }
};

template <auto F>
struct FunctionRegistrar {
  explicit FunctionRegistrar(const char* name) {
    using T = FunctionTraits<decltype(F)>;
    auto key = F;
    if constexpr (std::is_void_v<typename T::Class>) {
      register_function(&key, sizeof key, name, &invoke_function<F>, 0);
    } else {
      register_function(&key, sizeof key, name, &invoke_method<F>, 1);
    }
  }
};

template <class F>
uint64_t function_id_of(F f) {
  const FunctionEntry* e = find_function_by_key(&f, sizeof f);
  if (!e) throw_not_registered("function");
  return e->id;
}

}  // namespace weft::detail

#define WEFT_DETAIL_CAT2(a, b) a##b
#define WEFT_DETAIL_CAT(a, b) WEFT_DETAIL_CAT2(a, b)

// Makes a free function or an actor method callable remotely:
//   WEFT_REMOTE(add);  WEFT_REMOTE(&Counter::incr);
#define WEFT_REMOTE(f)                                                              \
  static const ::weft::detail::FunctionRegistrar<f> WEFT_DETAIL_CAT(weft_remote_, \
                                                                    __COUNTER__){#f}

// Makes a class an actor type, with the argument types of the constructor remote callers use:
//   WEFT_ACTOR(Counter, int);   (at global namespace scope)
#define WEFT_ACTOR(T, ...)                                                             \
  template <>                                                                          \
  struct weft::detail::ActorCtor<T> {                                                  \
    using Args = std::tuple<__VA_ARGS__>;                                              \
  };                                                                                   \
  static const ::weft::detail::ActorRegistrar<T __VA_OPT__(, ) __VA_ARGS__> WEFT_DETAIL_CAT( \
      weft_actor_, __COUNTER__) {                                                      \
    #T                                                                                 \
  }
