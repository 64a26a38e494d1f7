// Configuration: every setting has one name, given either as a `--weft-<name>=<value>` flag or
// as a `WEFT_<NAME>` environment variable (flags win). Names use '_' in the environment and
// either '_' or '-' in flags: --weft-inline-threshold=64K == WEFT_INLINE_THRESHOLD=64K.
// The names, kinds and defaults are the table in common/settings.cpp; docs/operations.md
// documents the same names. Every WEFT_* variable is a setting: an unknown one is an error.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace weft {

struct Setting;

class Config {
 public:
  // Reads WEFT_* from the environment, then consumes --weft-* arguments from argv up to a bare
  // `--`: they are removed, *argc is updated and argv stays NULL-terminated at its new end, so
  // the application sees only its own arguments. Values are taken only as --weft-<name>=<value>
  // (a bare --weft-<flag> means true for a boolean setting). Every value is checked against its
  // setting's kind. Throws ConfigError, naming the setting and where it came from, for an
  // unknown name (with the closest real one), a value-taking flag without '=', or a bad value.
  static Config from_env_and_args(int* argc, char*** argv);
  static Config from_env();

  // Readers. `key` must be a declared setting of the matching kind (an internal check), and a
  // declared default must be the one the reader passes. A value that does not fit the setting
  // throws ConfigError naming it. An empty value reads as the default for every kind but
  // strings (has() is true and get() returns "": the reader decides what empty means).
  bool has(std::string_view key) const;
  // The raw text (any kind); enum values come back lowercase and are checked against the set.
  std::string get(std::string_view key, std::string_view def) const;
  int64_t get_int(std::string_view key, int64_t def) const;
  double get_double(std::string_view key, double def) const;
  bool get_bool(std::string_view key, bool def) const;
  // Byte sizes: see parse_bytes.
  int64_t get_bytes(std::string_view key, int64_t def) const;
  // Sets a value as if given in the environment (tests, tools). An unknown key throws
  // ConfigError; the value is checked when read.
  void set(std::string_view key, std::string value);

  // Parses a byte size: a number (fractions allowed), optionally followed by a unit, in any
  // case: B; K, KB, Ki, KiB; M, MB, Mi, MiB; G...; T... — all powers of 1024 (KB is 1024 too).
  // Throws ConfigError naming `what`.
  static int64_t parse_bytes(std::string_view text, std::string_view what);

 private:
  struct Entry {
    std::string value;
    std::string source;  // "--weft-x=v" or "WEFT_X=v"; empty when set in code
  };
  const Entry* find(std::string_view key) const;
  void validate(const Setting& s, const Entry& e) const;

  std::map<std::string, Entry> values_;  // key: lowercase with '_'
};

}  // namespace weft
