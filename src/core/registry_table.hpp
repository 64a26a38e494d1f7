// The tables behind WEFT_REMOTE and WEFT_ACTOR (registry.cpp keeps the process's one): id →
// entry, function pointer bytes → id, and the collisions found while filling them. No I/O, no
// globals, so unit tests drive it with ids of their choosing (a real 64-bit hash collision
// cannot be produced on demand).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "weft/detail/registry.hpp"

namespace weft::detail {

class RegistryTable {
 public:
  // `key` identifies the function itself (the pointer's bytes). Registering the same function
  // again is a no-op; so is the same definition compiled into several translation units (same
  // symbol, same site: a WEFT_REMOTE in a header over a function with internal linkage). Another
  // function under the same name, or another name with the same id, is a conflict: the first
  // registration stays, the conflict is recorded. Returns the id callers must use.
  uint64_t add_function(FunctionEntry entry, std::string key);
  // Likewise for actor classes; `key` is the constructor's pointer bytes.
  uint64_t add_class(ClassEntry entry, std::string key);

  const FunctionEntry* function(uint64_t id) const;
  const FunctionEntry* function_by_key(std::string_view key) const;
  const ClassEntry* actor_class(uint64_t id) const;
  // One line per conflict, naming both sides (symbol and site).
  const std::vector<std::string>& conflicts() const { return conflicts_; }

 private:
  struct Function {
    FunctionEntry entry;
    std::string key;
  };
  struct Class {
    ClassEntry entry;
    std::string key;
  };
  // Looked up on every submission: by string_view, without building a string.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return std::hash<std::string_view>{}(k); }
  };
  std::unordered_map<uint64_t, Function> functions_;
  std::unordered_map<std::string, uint64_t, KeyHash, std::equal_to<>> by_key_;
  std::unordered_map<uint64_t, Class> classes_;
  std::vector<std::string> conflicts_;
};

// "int alpha::scale(int)" from the registrar's __PRETTY_FUNCTION__ ("... [with auto F =
// alpha::scale]" or "... [F = &alpha::scale]") and the demangled pointer type ("int (*)(int)").
// Either may be empty or in an unknown shape: the result is then whatever can be said.
std::string function_symbol(std::string_view pretty, std::string_view pointer_type);
std::string demangle(const char* mangled);

}  // namespace weft::detail
