// Registration of remote functions and actor classes (WEFT_REMOTE, WEFT_ACTOR), the collisions
// between them, and the names errors give them.
#include "weft/detail/registry.hpp"

#include <cxxabi.h>
#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string_view>

#include "core/exec_context.hpp"
#include "core/registry_table.hpp"
#include "weft/errors.hpp"

namespace weft::detail {
namespace {

struct Registry {
  std::mutex mu;  // registration happens at static-init time; lookups after are read-only
  RegistryTable table;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string hex_id(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(id));
  return buf;
}

std::string site_of(const RegistrationSource& s) {
  if (s.file == nullptr || *s.file == 0) return "";
  return std::string(s.file) + ":" + std::to_string(s.line);
}

// "int alpha::scale(int) (WEFT_REMOTE(scale) at a.cpp:12)"
std::string describe(const std::string& symbol, const char* macro, const std::string& name,
                     const std::string& site) {
  std::string s = (symbol.empty() ? name : symbol) + " (" + macro + "(" + name + ")";
  if (!site.empty()) s += " at " + site;
  return s + ")";
}
std::string describe(const FunctionEntry& e) {
  return describe(e.symbol, "WEFT_REMOTE", e.name, e.site);
}
std::string describe(const ClassEntry& e) {
  return describe(e.symbol, "WEFT_ACTOR", e.name, e.site);
}

// Both sides name the same source line: one definition compiled into several translation units.
bool same_source(const std::string& sym_a, const std::string& site_a, const std::string& sym_b,
                 const std::string& site_b) {
  return !site_a.empty() && site_a == site_b && sym_a == sym_b;
}

// Position of the '(' that opens the group ending at `close` (a ')'), or npos.
size_t open_paren_of(std::string_view s, size_t close) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (s[i] == ')') ++depth;
    if (s[i] == '(' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// --- naming a function by its address (errors only) -------------------------------------------
// The dynamic symbol table (dladdr) rarely has a program's own functions, so the object's
// static symbol table (.symtab) is read from its file; a stripped binary has none.

struct ObjectOf {
  uintptr_t addr = 0;
  std::string file;
  uintptr_t bias = 0;
  bool found = false;
};

int find_object(dl_phdr_info* info, size_t, void* data) {
  auto* o = static_cast<ObjectOf*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && o->addr >= lo && o->addr < lo + ph.p_memsz) {
      o->file = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
      o->bias = info->dlpi_addr;
      o->found = true;
      return 1;
    }
  }
  return 0;
}

template <class T>
bool read_at(std::ifstream& in, uint64_t off, T* out, size_t n = 1) {
  in.seekg(static_cast<std::streamoff>(off));
  in.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(sizeof(T) * n));
  return static_cast<bool>(in);
}

std::string elf_symbol_at(const std::string& file, uint64_t value) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr eh;
  if (!in || !read_at(in, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr)) {
    return "";
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  if (sh.empty() || !read_at(in, eh.e_shoff, sh.data(), sh.size())) return "";
  for (uint32_t want : {uint32_t(SHT_SYMTAB), uint32_t(SHT_DYNSYM)}) {
    for (const Elf64_Shdr& tab : sh) {
      if (tab.sh_type != want || tab.sh_entsize != sizeof(Elf64_Sym) || tab.sh_link >= sh.size())
        continue;
      std::vector<Elf64_Sym> syms(tab.sh_size / sizeof(Elf64_Sym));
      if (syms.empty() || !read_at(in, tab.sh_offset, syms.data(), syms.size())) continue;
      for (const Elf64_Sym& sym : syms) {
        if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value != value) continue;
        const Elf64_Shdr& strtab = sh[tab.sh_link];
        if (sym.st_name >= strtab.sh_size) continue;
        std::string name(256, '\0');
        in.clear();
        in.seekg(static_cast<std::streamoff>(strtab.sh_offset + sym.st_name));
        in.read(name.data(), static_cast<std::streamsize>(
                                 std::min<uint64_t>(name.size(), strtab.sh_size - sym.st_name)));
        name.resize(std::strlen(name.c_str()));
        if (!name.empty()) return demangle(name.c_str());
      }
    }
  }
  return "";
}

std::string symbol_at(uintptr_t addr) {
  ObjectOf o;
  o.addr = addr;
  dl_iterate_phdr(&find_object, &o);
  return o.found ? elf_symbol_at(o.file, addr - o.bias) : "";
}

}  // namespace

std::string demangle(const char* mangled) {
  int status = 0;
  char* p = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string s = status == 0 && p ? p : mangled;
  std::free(p);
  return s;
}

std::string function_symbol(std::string_view pretty, std::string_view pointer_type) {
  // The template argument: what follows "F = " up to a top-level ';' or the closing ']'.
  std::string name;
  if (size_t at = pretty.find("F = "); at != std::string_view::npos) {
    at += 4;
    int depth = 0;
    size_t end = at;
    for (; end < pretty.size(); ++end) {
      const char c = pretty[end];
      if (c == '<' || c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == '>' || c == ')' || c == ']' || c == '}') {
        if (depth == 0) break;
        --depth;
      } else if (c == ';' && depth == 0) {
        break;
      }
    }
    name = std::string(pretty.substr(at, end - at));
    if (!name.empty() && name[0] == '&') name.erase(0, 1);
    name = replace_all(name, "{anonymous}", "(anonymous namespace)");
  }
  if (name.empty()) return std::string(pointer_type);
  // Splice the name into the pointer type: "int (*)(int)" → "int alpha::scale(int)",
  // "int (Counter::*)(int)" → "int Counter::incr(int)".
  std::string type(pointer_type);
  if (size_t star = type.find("(*)"); star != std::string::npos) return type.replace(star, 3, name);
  if (size_t mp = type.find("::*)"); mp != std::string::npos) {
    const size_t close = mp + 3;
    if (size_t open = open_paren_of(type, close); open != std::string::npos)
      return type.replace(open, close - open + 1, name);
  }
  return type.empty() ? name : name + " [" + type + "]";
}

uint64_t RegistryTable::add_function(FunctionEntry e, std::string key) {
  const uint64_t id = e.id;
  auto [it, fresh] = functions_.try_emplace(id);
  if (fresh) {
    it->second = Function{std::move(e), key};
  } else {
    const Function& first = it->second;
    if (first.entry.name != e.name) {
      conflicts_.push_back("the WEFT_REMOTE names '" + first.entry.name + "' and '" + e.name +
                           "' hash to the same id " + hex_id(id) + ": " + describe(first.entry) +
                           " and " + describe(e) + "; rename one of them");
    } else if (first.key != key &&
               !same_source(first.entry.symbol, first.entry.site, e.symbol, e.site)) {
      conflicts_.push_back(
          "two different functions are registered under the name '" + e.name +
          "': " + describe(first.entry) + " and " + describe(e) +
          "; a call to either would run the first. Give each its own name: write the "
          "qualified name in the macro (WEFT_REMOTE(ns::f), WEFT_REMOTE(&ns::Class::method)) "
          "or rename one");
    }
  }
  by_key_.try_emplace(std::move(key), id);  // the same function under two names: the first
  return id;
}

uint64_t RegistryTable::add_class(ClassEntry e, std::string key) {
  const uint64_t id = e.id;
  auto [it, fresh] = classes_.try_emplace(id);
  if (fresh) {
    it->second = Class{std::move(e), std::move(key)};
    return id;
  }
  const Class& first = it->second;
  if (first.entry.name != e.name) {
    conflicts_.push_back("the WEFT_ACTOR names '" + first.entry.name + "' and '" + e.name +
                         "' hash to the same id " + hex_id(id) + ": " + describe(first.entry) +
                         " and " + describe(e) + "; rename one of them");
  } else if (first.key != key &&
             !same_source(first.entry.symbol, first.entry.site, e.symbol, e.site)) {
    conflicts_.push_back(
        "two registrations of the actor class name '" + e.name +
        "' disagree: " + describe(first.entry) + " and " + describe(e) +
        " (two different classes, or one class with two constructor argument lists); actors "
        "of either would be built as the first. Give each class its own name (WEFT_ACTOR takes "
        "the qualified one: WEFT_ACTOR(ns::Class, ...)) or register it once");
  }
  return id;
}

const FunctionEntry* RegistryTable::function(uint64_t id) const {
  auto it = functions_.find(id);
  return it == functions_.end() ? nullptr : &it->second.entry;
}

const FunctionEntry* RegistryTable::function_by_key(std::string_view key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : function(it->second);
}

const ClassEntry* RegistryTable::actor_class(uint64_t id) const {
  auto it = classes_.find(id);
  return it == classes_.end() ? nullptr : &it->second.entry;
}

uint64_t hash_name(std::string_view name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, stable across builds and ranks
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t register_function(const void* key, size_t key_len, std::string name, Invoker invoke,
                           uint64_t is_method, const RegistrationSource& source) {
  FunctionEntry e;
  e.id = hash_name(name);
  e.name = std::move(name);
  e.invoke = invoke;
  e.is_method = is_method;
  e.symbol = function_symbol(source.pretty ? source.pretty : "",
                             source.type ? demangle(source.type->name()) : "");
  e.site = site_of(source);
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  return r.table.add_function(std::move(e), std::string(static_cast<const char*>(key), key_len));
}

uint64_t register_class(std::string name, Constructor construct, const RegistrationSource& source,
                        StateSaver save, StateLoader load) {
  ClassEntry e;
  e.save_state = save;
  e.load_state = load;
  e.id = hash_name("class:" + name);
  e.name = std::move(name);
  e.construct = construct;
  e.symbol = source.type ? demangle(source.type->name()) : "";
  e.site = site_of(source);
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  return r.table.add_class(
      std::move(e), std::string(reinterpret_cast<const char*>(&construct), sizeof construct));
}

std::vector<std::string> registration_conflicts() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  return r.table.conflicts();
}

void check_registrations() {
  const std::vector<std::string> c = registration_conflicts();
  if (c.empty()) return;
  std::string msg = "Weft cannot start: " + std::to_string(c.size()) +
                    (c.size() == 1 ? " registration collides" : " registrations collide") +
                    " (the wire names a function or actor class by the hash of its registered "
                    "name, so each name must denote one thing):";
  for (const std::string& line : c) msg += "\n  - " + line;
  throw ConfigError(msg);
}

const FunctionEntry* find_function(uint64_t id) { return registry().table.function(id); }

const FunctionEntry* find_function_by_key(const void* key, size_t key_len) {
  const std::string_view k(static_cast<const char*>(key), key_len);
  // Every .remote() and actor call looks its function up by the pointer's bytes: two hash
  // lookups (the bytes, then the id), about 170 instructions. Entries are never removed, and the
  // maps' nodes never move, so each thread keeps the entries it found, 8 of them indexed by the
  // pointer's first word: a hit is a compare of at most 16 bytes.
  struct Slot {
    char key[16];
    size_t len = 0;
    const FunctionEntry* entry = nullptr;
  };
  thread_local Slot cache[8];
  if (key_len > sizeof(Slot::key)) return registry().table.function_by_key(k);
  uint64_t word = 0;
  std::memcpy(&word, key, std::min(key_len, sizeof word));
  Slot& slot = cache[(word * 0x9e3779b97f4a7c15ull) >> 61];
  if (slot.entry && slot.len == key_len && std::memcmp(slot.key, key, key_len) == 0)
    return slot.entry;
  const FunctionEntry* e = registry().table.function_by_key(k);
  if (e) {  // a miss is not kept: the function may be registered later (a library loaded)
    std::memcpy(slot.key, key, key_len);
    slot.len = key_len;
    slot.entry = e;
  }
  return e;
}

const ClassEntry* find_class(uint64_t id) { return registry().table.actor_class(id); }

std::string describe_function(uint64_t id) {
  const FunctionEntry* e = find_function(id);
  return e ? describe(*e) : "function id " + hex_id(id);
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

void throw_function_not_registered(const void* key, size_t key_len, const std::type_info& type) {
  // A free function's pointer is its address; a non-virtual member function pointer (Itanium
  // ABI) starts with it, and a virtual one holds an odd vtable offset instead.
  uintptr_t addr = 0;
  if (key_len == sizeof(void*) || key_len == 2 * sizeof(void*))
    std::memcpy(&addr, key, sizeof addr);
  if (key_len == 2 * sizeof(void*) && (addr & 1)) addr = 0;
  const std::string type_name = demangle(type.name());
  std::string symbol = addr ? symbol_at(addr) : "";
  std::string what, macro_arg;
  if (symbol.empty()) {
    what = (key_len == sizeof(void*) ? "the function of type " : "the method of type ") + type_name;
    macro_arg = key_len == sizeof(void*) ? "f" : "&Class::method";
  } else {
    what = symbol;
    macro_arg = replace_all(symbol, "(anonymous namespace)::", "");
    macro_arg = macro_arg.substr(0, macro_arg.find('('));
    if (key_len != sizeof(void*)) macro_arg = "&" + macro_arg;
  }
  throw Error(what + " is not registered: add WEFT_REMOTE(" + macro_arg +
              ") at namespace scope beside its definition (every rank runs the same binary, so "
              "that one line registers it everywhere)");
}

void throw_class_not_registered(const std::type_info& type) {
  const std::string name = demangle(type.name());
  throw Error("the actor class " + name + " is not registered: add WEFT_ACTOR(" +
              replace_all(name, "(anonymous namespace)::", "") +
              ", constructor argument types...) at global namespace scope");
}

std::pair<const char*, size_t> arg_bytes(ArgReader& in, const CallArgs& args, size_t index,
                                         size_t* next_pin, std::shared_ptr<const Payload>* pin) {
  ArgEntry e;
  try {
    e = in.next();
  } catch (const std::exception& x) {
    throw_arg_decode_error(index, current_function_name(), x.what());
  }
  if (e.tag == ArgTag::kInline) return {e.data, static_cast<size_t>(e.size)};
  if (e.tag != ArgTag::kStored || *next_pin >= args.num_pins)
    throw_arg_decode_error(index, current_function_name(),
                           e.tag == ArgTag::kRef ? "unresolved ref argument"
                                                 : "a stored argument that was not opened");
  const std::shared_ptr<const Payload>& p = args.pins[(*next_pin)++];
  if (pin) *pin = p;
  return {p->data(), p->size()};
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
