// The topology file: which NVLink domain each node belongs to, for clusters where NVML cannot tell
// (no fabric manager, older drivers) and for tests that simulate racks with virtual nodes.
//
// Format (UTF-8 text, one rule per line, first matching rule wins):
//
//   # NVL72 racks of the cluster; '#' starts a comment, blank lines are ignored
//   gpu[001-018]        rack-a      # Slurm-style host list: ranges, lists, zero padding kept
//   gpu[019-036,040]    rack-b
//   login*              none-login  # shell glob (* and ?) on the hostname
//   node:0-3            sim-0       # node indexes of this job (virtual nodes share a hostname)
//   node:4,5,6-7        sim-1
//
// A rule is "<nodes> <domain>": two whitespace-separated fields. A node no rule matches is its own
// domain. Malformed lines are a ConfigError naming the file and line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::gpu {

class TopologyMap {
 public:
  // `origin` names the text in error messages (usually the file's path).
  static TopologyMap parse(std::string_view text, std::string_view origin);
  // Reads and parses `path`; an unreadable file is a ConfigError.
  static TopologyMap load(const std::string& path);

  // The domain of the node called `hostname` with job node index `node_index`, if a rule matches.
  std::optional<std::string> domain_of(std::string_view hostname, int node_index) const;
  size_t rule_count() const { return rules_.size(); }

 private:
  struct Rule {
    std::vector<std::string> host_patterns;        // expanded host list entries (may hold globs)
    std::vector<std::pair<int, int>> node_ranges;  // inclusive, for "node:" rules
    std::string domain;
  };
  std::vector<Rule> rules_;
};

// Expands a Slurm-style host list entry: "gpu[01-03,07]" -> gpu01 gpu02 gpu03 gpu07; several
// bracket groups multiply ("r[1-2]n[1-2]"). Throws ConfigError (naming `origin`) when malformed.
std::vector<std::string> expand_hostlist(std::string_view pattern, std::string_view origin);

}  // namespace weft::gpu
