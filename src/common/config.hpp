// Configuration: every setting has one name, given either as a `--weft-<name>=<value>` flag or
// as a `WEFT_<NAME>` environment variable (flags win). Names use '_' in the environment and
// either '_' or '-' in flags: --weft-inline-threshold=64K == WEFT_INLINE_THRESHOLD=64K.
// Every key and default is documented in docs/operations.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace weft {

class Config {
 public:
  // Reads WEFT_* from the environment, then consumes --weft-* arguments from argv (they are
  // removed, so the application sees only its own flags). Throws ConfigError on a malformed flag.
  static Config from_env_and_args(int* argc, char*** argv);
  static Config from_env();

  bool has(std::string_view key) const;
  std::string get(std::string_view key, std::string_view def) const;
  int64_t get_int(std::string_view key, int64_t def) const;
  double get_double(std::string_view key, double def) const;
  bool get_bool(std::string_view key, bool def) const;
  // Byte sizes accept suffixes K, M, G, T (powers of 1024) and an optional trailing B.
  int64_t get_bytes(std::string_view key, int64_t def) const;
  void set(std::string_view key, std::string value);

  const std::map<std::string, std::string>& values() const { return values_; }

  // Parses a byte size such as "64K", "1.5G", "4096"; throws ConfigError naming `what`.
  static int64_t parse_bytes(std::string_view text, std::string_view what);

 private:
  std::map<std::string, std::string> values_;  // key: lowercase with '_'
};

}  // namespace weft
