#include "weft/detail/registry.hpp"

#include <map>
#include <mutex>
#include <unordered_map>

#include "common/log.hpp"
#include "core/exec_context.hpp"
#include "weft/errors.hpp"

namespace weft::detail {
namespace {

struct Registry {
  std::mutex mu;  // registration happens at static-init time; lookups after are read-only
  std::unordered_map<uint64_t, FunctionEntry> functions;
  std::map<std::string, uint64_t> by_key;
  std::unordered_map<uint64_t, ClassEntry> classes;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

uint64_t hash_name(std::string_view name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, stable across builds and ranks
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t register_function(const void* key, size_t key_len, std::string name, Invoker invoke,
                           uint64_t is_method) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  uint64_t id = hash_name(name);
  auto [it, fresh] = r.functions.try_emplace(id);
  if (!fresh && it->second.name != name) {
    WEFT_LOG(Error) << "remote function names '" << name << "' and '" << it->second.name
                    << "' hash alike; rename one";
  }
  it->second = FunctionEntry{id, std::move(name), invoke, is_method};
  r.by_key[std::string(static_cast<const char*>(key), key_len)] = id;
  return id;
}

uint64_t register_class(std::string name, Constructor construct) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  uint64_t id = hash_name("class:" + name);
  r.classes[id] = ClassEntry{id, std::move(name), construct};
  return id;
}

const FunctionEntry* find_function(uint64_t id) {
  Registry& r = registry();
  auto it = r.functions.find(id);
  return it == r.functions.end() ? nullptr : &it->second;
}

const FunctionEntry* find_function_by_key(const void* key, size_t key_len) {
  Registry& r = registry();
  auto it = r.by_key.find(std::string(static_cast<const char*>(key), key_len));
  return it == r.by_key.end() ? nullptr : find_function(it->second);
}

const ClassEntry* find_class(uint64_t id) {
  Registry& r = registry();
  auto it = r.classes.find(id);
  return it == r.classes.end() ? nullptr : &it->second;
}

std::string class_name(uint64_t class_id) {
  const ClassEntry* c = find_class(class_id);
  return c ? c->name : "class #" + std::to_string(class_id);
}

void throw_not_registered(const char* what) {
  throw Error(std::string("this ") + what +
              " is not registered: add WEFT_REMOTE(f) for functions and methods, "
              "WEFT_ACTOR(Class, ctor args...) for actor classes");
}

void read_arg_slice(serde::Reader& in, size_t index, const char** data, size_t* len) {
  char tag;
  uint64_t n;
  try {
    in.read(&tag, 1);
    in.read(&n, sizeof n);
    *data = in.skip(n);
  } catch (const std::exception& e) {
    throw_arg_decode_error(index, current_function_name(), e.what());
  }
  if (tag != 0) throw_arg_decode_error(index, current_function_name(), "unresolved ref argument");
  *len = n;
}

void throw_arg_decode_error(size_t index, const char* function, const char* why) {
  throw SerializationError("cannot decode argument " + std::to_string(index) + " of " +
                           (function && *function ? function : "a remote call") + ": " + why);
}

const char* current_function_name() {
  core::ExecContext* c = core::current_exec();
  return c ? c->function : "";
}

}  // namespace weft::detail
