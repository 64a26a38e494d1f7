#include "common/config.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "common/check.hpp"
#include "common/settings.hpp"
#include "weft/errors.hpp"

extern char** environ;

namespace weft {
namespace {

std::string normalize(std::string_view key) {
  std::string k(key);
  for (char& c : k) {
    c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return k;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string flag_of(std::string_view name) {
  std::string f = "--weft-" + std::string(name);
  for (char& c : f) c = c == '_' ? '-' : c;
  return f;
}

std::string env_of(std::string_view name) {
  std::string e = "WEFT_" + std::string(name);
  for (char& c : e) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return e;
}

// "(--weft-x=v)" or "(WEFT_X=v)" where the value came from; both spellings when set in code.
std::string where(std::string_view name, const std::string& source) {
  if (!source.empty()) return "(" + source + ")";
  return "(" + env_of(name) + " or " + flag_of(name) + ")";
}

// Variables of Weft's own scripts that used to share the WEFT_ prefix, and their names now.
struct Moved {
  std::string_view old_name, new_name, owner;
};
constexpr Moved kMoved[] = {
    {"WEFT_APP", "WEFTJOB_APP", "the Slurm templates"},
    {"WEFT_RUN_ARGS", "WEFTJOB_RUN_ARGS", "the Slurm templates"},
    {"WEFT_RUN", "WEFTJOB_RUN", "the Slurm templates"},
    {"WEFT_HOME", "WEFTJOB_HOME", "the Slurm templates"},
    {"WEFT_CHECKPOINT_DIR", "WEFTJOB_CHECKPOINT_DIR", "the Slurm templates"},
    {"WEFT_MAX_REQUEUES", "WEFTJOB_MAX_REQUEUES", "the Slurm templates"},
    {"WEFT_REQUEUE_EXIT_CODE", "WEFTJOB_REQUEUE_EXIT_CODE", "the Slurm templates"},
    {"WEFT_RUN_LAUNCHER", "WEFTRUN_LAUNCHER", "weft-run"},
    {"WEFT_RUN_MPIRUN", "WEFTRUN_MPIRUN", "weft-run"},
    {"WEFT_RUN_SRUN", "WEFTRUN_SRUN", "weft-run"},
    {"WEFT_RUN_SRUN_MPI", "WEFTRUN_SRUN_MPI", "weft-run"},
    {"WEFT_BUILD_DIR", "WEFTDEV_BUILD_DIR", "scripts/"},
};

[[noreturn]] void unknown(std::string_view name, const std::string& source, bool from_env) {
  const std::string env_name = env_of(name);
  if (from_env) {
    for (const Moved& m : kMoved) {
      if (env_name == m.old_name) {
        throw ConfigError("unknown setting '" + std::string(name) + "' (" + source +
                          "): " + std::string(m.owner) + " read " + std::string(m.new_name) +
                          " now; WEFT_* variables are Weft settings only");
      }
    }
  }
  std::string msg = "unknown setting '" + std::string(name) + "' (" + source + ")";
  if (std::optional<std::string_view> near = closest_setting(name)) {
    msg += ": did you mean " + std::string(*near) + " (" +
           (from_env ? env_of(*near) : flag_of(*near)) + ")?";
  } else if (from_env) {
    msg += ": every WEFT_* environment variable is read as a Weft setting.";
  } else {
    msg += ".";
  }
  throw ConfigError(msg + " The settings are listed in docs/operations.md.");
}

// Formats a bound for a message: byte sizes in the largest exact unit.
std::string bound_text(SettingKind kind, double v) {
  if (kind == SettingKind::kBytes) {
    const char* units[] = {"", "K", "M", "G", "T"};
    auto b = static_cast<int64_t>(v);
    int u = 0;
    while (u < 4 && b != 0 && b % 1024 == 0) b /= 1024, ++u;
    return std::to_string(b) + units[u];
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

int64_t parse_int(const Setting& s, const std::string& text, const std::string& source) {
  int64_t v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  if (b == e || ec != std::errc() || p != e) {
    throw ConfigError("setting " + std::string(s.name) + " " + where(s.name, source) + " expects " +
                      describe_kind(s) + ", got '" + text + "'");
  }
  return v;
}

double parse_double(const Setting& s, const std::string& text, const std::string& source) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const bool digits = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) ||
                                        text[0] == '.' || text[0] == '-' || text[0] == '+');
  if (!digits || end == text.c_str() || *end != '\0' || !std::isfinite(v) ||
      text.find_first_of("xX") != std::string::npos) {
    throw ConfigError("setting " + std::string(s.name) + " " + where(s.name, source) + " expects " +
                      describe_kind(s) + ", got '" + text + "'");
  }
  return v;
}

bool parse_bool(const Setting& s, const std::string& text, const std::string& source) {
  const std::string v = lower(text);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw ConfigError("setting " + std::string(s.name) + " " + where(s.name, source) + " expects " +
                    describe_kind(s) + ", got '" + text + "'");
}

std::string parse_enum(const Setting& s, const std::string& text, const std::string& source) {
  const std::string v = lower(text);
  for (std::string_view a : s.allowed) {
    if (v == a) return v;
  }
  throw ConfigError("setting " + std::string(s.name) + " " + where(s.name, source) + " must be " +
                    describe_kind(s) + ", got '" + text + "'");
}

void check_range(const Setting& s, double v, const std::string& text, const std::string& source) {
  const bool low = s.min && v < *s.min, high = s.max && v > *s.max;
  if (!low && !high) return;
  std::string want;
  if (s.min && s.max) {
    want = "between " + bound_text(s.kind, *s.min) + " and " + bound_text(s.kind, *s.max);
  } else if (s.min) {
    want = "at least " + bound_text(s.kind, *s.min);
  } else {
    want = "at most " + bound_text(s.kind, *s.max);
  }
  throw ConfigError("setting " + std::string(s.name) + " " + where(s.name, source) + " must be " +
                    want + ", got '" + text + "'");
}

// The declared setting a reader asks for; reading an undeclared name, or one of another kind,
// is a bug in the reader.
const Setting& declared(std::string_view key, std::initializer_list<SettingKind> kinds) {
  const Setting* s = find_setting(key);
  WEFT_CHECK(s != nullptr) << "setting '" << key
                           << "' is read but not declared in src/common/settings.cpp";
  bool kind_ok = kinds.size() == 0;
  for (SettingKind k : kinds) kind_ok = kind_ok || s->kind == k;
  WEFT_CHECK(kind_ok) << "setting '" << key << "' is read as another kind than it is declared";
  return *s;
}

}  // namespace

const Config::Entry* Config::find(std::string_view key) const {
  auto it = values_.find(normalize(key));
  return it == values_.end() ? nullptr : &it->second;
}

void Config::validate(const Setting& s, const Entry& e) const {
  switch (s.kind) {
    case SettingKind::kInt:
      check_range(s, static_cast<double>(parse_int(s, e.value, e.source)), e.value, e.source);
      break;
    case SettingKind::kBytes: {
      const std::string what = "setting " + std::string(s.name) + " " + where(s.name, e.source);
      check_range(s, static_cast<double>(parse_bytes(e.value, what)), e.value, e.source);
      break;
    }
    case SettingKind::kDouble:
      check_range(s, parse_double(s, e.value, e.source), e.value, e.source);
      break;
    case SettingKind::kBool:
      parse_bool(s, e.value, e.source);
      break;
    case SettingKind::kEnum:
      parse_enum(s, e.value, e.source);
      break;
    case SettingKind::kString:
      break;
  }
}

Config Config::from_env() {
  Config c;
  for (char** e = environ; e && *e; ++e) {
    const char* kv = *e;
    if (std::strncmp(kv, "WEFT_", 5) != 0) continue;
    const char* eq = std::strchr(kv, '=');
    if (!eq) continue;
    const std::string name = normalize(std::string_view(kv + 5, eq - kv - 5));
    const Setting* s = find_setting(name);
    if (!s) unknown(name, kv, /*from_env=*/true);
    Entry entry{eq + 1, kv};
    if (!entry.value.empty()) c.validate(*s, entry);
    c.values_[name] = std::move(entry);
  }
  return c;
}

Config Config::from_env_and_args(int* argc, char*** argv) {
  Config c = from_env();
  if (!argc || !argv || !*argv) return c;
  std::vector<char*> keep;
  bool options = true;  // until a bare "--": what follows is the application's alone
  for (int i = 0; i < *argc; ++i) {
    char* a = (*argv)[i];
    if (i > 0 && options && std::strcmp(a, "--") == 0) options = false;
    if (i == 0 || !options || std::strncmp(a, "--weft-", 7) != 0) {
      keep.push_back(a);
      continue;
    }
    const char* body = a + 7;
    const char* eq = std::strchr(body, '=');
    const std::string name = normalize(eq ? std::string_view(body, eq - body) : body);
    if (name.empty()) {
      throw ConfigError(std::string("malformed flag '") + a +
                        "': write --weft-<setting>=<value> (settings: docs/operations.md)");
    }
    const Setting* s = find_setting(name);
    if (!s) unknown(name, a, /*from_env=*/false);
    Entry entry;
    entry.source = a;
    if (eq) {
      entry.value = eq + 1;
    } else if (s->kind == SettingKind::kBool) {
      entry.value = "true";  // a bare boolean flag switches it on
    } else {
      throw ConfigError("setting " + std::string(s->name) + " (" + a + ") takes a value: write " +
                        flag_of(s->name) + "=<value>, where the value is " + describe_kind(*s) +
                        ". Values are taken only after '=', so the next argument stays the "
                        "application's.");
    }
    if (!entry.value.empty()) c.validate(*s, entry);
    c.values_[name] = std::move(entry);
  }
  for (size_t i = 0; i < keep.size(); ++i) (*argv)[i] = keep[i];
  (*argv)[keep.size()] = nullptr;
  *argc = static_cast<int>(keep.size());
  return c;
}

bool Config::has(std::string_view key) const {
  declared(key, {});
  return find(key) != nullptr;
}

std::string Config::get(std::string_view key, std::string_view def) const {
  const Setting& s = declared(key, {});
  const Entry* e = find(key);
  if (!e) return std::string(def);
  if (s.kind == SettingKind::kEnum) {
    return e->value.empty() ? std::string(def) : parse_enum(s, e->value, e->source);
  }
  return e->value;  // a string setting given empty is empty (its reader decides what that means)
}

void Config::set(std::string_view key, std::string value) {
  const std::string name = normalize(key);
  if (!find_setting(name)) unknown(name, "set to '" + value + "'", /*from_env=*/false);
  values_[name] = Entry{std::move(value), ""};
}

int64_t Config::get_int(std::string_view key, int64_t def) const {
  const Setting& s = declared(key, {SettingKind::kInt});
  WEFT_CHECK(s.default_value.empty() || parse_int(s, std::string(s.default_value), "") == def)
      << "the default of " << key << " in the code (" << def << ") is not the declared one ("
      << s.default_value << ")";
  const Entry* e = find(key);
  if (!e || e->value.empty()) return def;
  const int64_t v = parse_int(s, e->value, e->source);
  check_range(s, static_cast<double>(v), e->value, e->source);
  return v;
}

double Config::get_double(std::string_view key, double def) const {
  const Setting& s = declared(key, {SettingKind::kDouble});
  WEFT_CHECK(s.default_value.empty() || parse_double(s, std::string(s.default_value), "") == def)
      << "the default of " << key << " in the code (" << def << ") is not the declared one ("
      << s.default_value << ")";
  const Entry* e = find(key);
  if (!e || e->value.empty()) return def;
  const double v = parse_double(s, e->value, e->source);
  check_range(s, v, e->value, e->source);
  return v;
}

bool Config::get_bool(std::string_view key, bool def) const {
  const Setting& s = declared(key, {SettingKind::kBool});
  WEFT_CHECK(s.default_value.empty() || parse_bool(s, std::string(s.default_value), "") == def)
      << "the default of " << key << " in the code (" << def << ") is not the declared one ("
      << s.default_value << ")";
  const Entry* e = find(key);
  return e && !e->value.empty() ? parse_bool(s, e->value, e->source) : def;
}

int64_t Config::get_bytes(std::string_view key, int64_t def) const {
  const Setting& s = declared(key, {SettingKind::kBytes});
  WEFT_CHECK(s.default_value.empty() || parse_bytes(s.default_value, s.name) == def)
      << "the default of " << key << " in the code (" << def << ") is not the declared one ("
      << s.default_value << ")";
  const Entry* e = find(key);
  if (!e || e->value.empty()) return def;
  const int64_t v =
      parse_bytes(e->value, "setting " + std::string(s.name) + " " + where(s.name, e->source));
  check_range(s, static_cast<double>(v), e->value, e->source);
  return v;
}

int64_t Config::parse_bytes(std::string_view text, std::string_view what) {
  const std::string s(text);
  auto fail = [&] {
    throw ConfigError(std::string(what) +
                      " expects a byte size such as 4096, 64K, 1.5MiB or 2G (units: "
                      "docs/operations.md), got '" +
                      s + "'");
  };
  // A plain decimal number: strtod alone would also take hex, "inf" and "nan".
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.')) fail();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || s.find_first_of("xX") != std::string::npos) fail();
  std::string suffix = lower(end);
  while (!suffix.empty() && suffix.front() == ' ') suffix.erase(0, 1);
  double mult = 0;
  if (suffix.empty() || suffix == "b") mult = 1;
  const char* units = "kmgt";
  double m = 1024.0;
  for (const char* u = units; *u && mult == 0; ++u, m *= 1024.0) {
    const std::string p(1, *u);
    if (suffix == p || suffix == p + "b" || suffix == p + "i" || suffix == p + "ib") mult = m;
  }
  if (mult == 0 || !std::isfinite(v) || v < 0 || v * mult >= 9.2e18) fail();
  return static_cast<int64_t>(v * mult);
}

}  // namespace weft
