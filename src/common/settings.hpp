// The table of every Weft setting: its name, the kind of value it takes, its default and what it
// does. Config accepts only names listed here, checks every value against its kind when it is
// read from flags or the environment, and refuses to read a name that is not here, so a setting
// cannot be used without being declared (and documented: docs/operations.md lists the same
// names, and a test holds the two together).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

enum class SettingKind { kInt, kBytes, kBool, kDouble, kEnum, kString };

struct Setting {
  std::string_view name;  // lowercase with '_': the flag is --weft-<name>, the variable WEFT_<NAME>
  SettingKind kind;
  // The default as the code applies it, in the setting's own syntax ("100K", "true", "ucx"), or
  // empty when it is computed at start-up or means "unset"; default_doc then says what happens.
  std::string_view default_value;
  std::string_view default_doc;
  std::string_view doc;                        // one line
  std::vector<std::string_view> allowed = {};  // kEnum: the values accepted (case-insensitive)
  std::optional<double> min = std::nullopt;    // kInt, kBytes, kDouble: smallest value accepted
  std::optional<double> max = std::nullopt;    // ... and largest
};

// Every setting, in the order docs/operations.md lists them.
std::span<const Setting> all_settings();
// The setting called `name` (normalized: lowercase, '-' read as '_'), or nullptr.
const Setting* find_setting(std::string_view name);
// The known setting closest to `name` by edit distance, when it is close enough to be a likely
// misspelling; nullopt otherwise.
std::optional<std::string_view> closest_setting(std::string_view name);
// Edit distance (insertions, deletions, substitutions, adjacent transpositions).
size_t edit_distance(std::string_view a, std::string_view b);

// Names a value of this kind for messages: "an integer", "a byte size such as 64K or 1.5GiB", ...
std::string describe_kind(const Setting& s);

}  // namespace weft
