#include "common/config.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "weft/errors.hpp"

extern char** environ;

namespace weft {
namespace {

std::string normalize(std::string_view key) {
  std::string k(key);
  for (char& c : k) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k;
}

}  // namespace

Config Config::from_env() {
  Config c;
  for (char** e = environ; e && *e; ++e) {
    const char* kv = *e;
    if (std::strncmp(kv, "WEFT_", 5) != 0) continue;
    const char* eq = std::strchr(kv, '=');
    if (!eq) continue;
    c.values_[normalize(std::string_view(kv + 5, eq - kv - 5))] = eq + 1;
  }
  return c;
}

Config Config::from_env_and_args(int* argc, char*** argv) {
  Config c = from_env();
  if (!argc || !argv || !*argv) return c;
  std::vector<char*> keep;
  for (int i = 0; i < *argc; ++i) {
    char* a = (*argv)[i];
    if (i == 0 || std::strncmp(a, "--weft-", 7) != 0) {
      keep.push_back(a);
      continue;
    }
    const char* body = a + 7;
    const char* eq = std::strchr(body, '=');
    std::string key, value;
    if (eq) {
      key = normalize(std::string_view(body, eq - body));
      value = eq + 1;
    } else if (i + 1 < *argc && std::strncmp((*argv)[i + 1], "--", 2) != 0) {
      key = normalize(body);
      value = (*argv)[++i];
    } else {
      key = normalize(body);
      value = "1";  // a bare flag is a boolean switch
    }
    if (key.empty()) throw ConfigError(std::string("malformed flag '") + a + "'");
    c.values_[key] = value;
  }
  for (size_t i = 0; i < keep.size(); ++i) (*argv)[i] = keep[i];
  (*argv)[keep.size()] = nullptr;
  *argc = static_cast<int>(keep.size());
  return c;
}

bool Config::has(std::string_view key) const { return values_.count(normalize(key)) != 0; }

std::string Config::get(std::string_view key, std::string_view def) const {
  auto it = values_.find(normalize(key));
  return it == values_.end() ? std::string(def) : it->second;
}

void Config::set(std::string_view key, std::string value) { values_[normalize(key)] = std::move(value); }

int64_t Config::get_int(std::string_view key, int64_t def) const {
  auto it = values_.find(normalize(key));
  if (it == values_.end() || it->second.empty()) return def;
  char* end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (*end != '\0')
    throw ConfigError("setting '" + std::string(key) + "' expects an integer, got '" + it->second + "'");
  return v;
}

double Config::get_double(std::string_view key, double def) const {
  auto it = values_.find(normalize(key));
  if (it == values_.end() || it->second.empty()) return def;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v))
    throw ConfigError("setting '" + std::string(key) + "' expects a number, got '" + it->second + "'");
  return v;
}

bool Config::get_bool(std::string_view key, bool def) const {
  auto it = values_.find(normalize(key));
  if (it == values_.end() || it->second.empty()) return def;
  std::string v = normalize(it->second);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw ConfigError("setting '" + std::string(key) + "' expects true/false, got '" + it->second + "'");
}

int64_t Config::parse_bytes(std::string_view text, std::string_view what) {
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string suffix = normalize(end);
  if (suffix.size() >= 2 && suffix.compare(suffix.size() - 2, 2, "ib") == 0) suffix.resize(suffix.size() - 2);
  else if (!suffix.empty() && suffix.back() == 'b') suffix.pop_back();
  double mult = 1;
  if (suffix == "k") mult = 1024.0;
  else if (suffix == "m") mult = 1024.0 * 1024;
  else if (suffix == "g") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "t") mult = 1024.0 * 1024 * 1024 * 1024;
  else if (!suffix.empty() || end == s.c_str() || !(v >= 0) || !std::isfinite(v))
    throw ConfigError("setting '" + std::string(what) + "' expects a byte size like 64K or 2G, got '" + s + "'");
  return static_cast<int64_t>(v * mult);
}

int64_t Config::get_bytes(std::string_view key, int64_t def) const {
  auto it = values_.find(normalize(key));
  if (it == values_.end() || it->second.empty()) return def;
  return parse_bytes(it->second, key);
}

}  // namespace weft
