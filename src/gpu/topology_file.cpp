#include "gpu/topology_file.hpp"

#include <fnmatch.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "weft/errors.hpp"

namespace weft::gpu {
namespace {

// A bound on what a rule may expand to: a typo such as "n[0-99999999]" must fail, not eat memory.
constexpr size_t kMaxExpansion = 1 << 20;

[[noreturn]] void fail(std::string_view origin, int line, const std::string& why) {
  std::string where(origin);
  if (line > 0) where += ":" + std::to_string(line);
  throw ConfigError("topology file " + where + ": " + why +
                    " (expected lines '<nodes> <domain>', see src/gpu/topology_file.hpp)");
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

int parse_index(std::string_view s, std::string_view origin, int line) {
  if (!all_digits(s) || s.size() > 9) fail(origin, line, "bad number '" + std::string(s) + "'");
  return std::stoi(std::string(s));
}

// Splits on `sep` outside [...] groups.
std::vector<std::string> split_top(std::string_view s, char sep) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == sep && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> expand_group(std::string_view body, std::string_view origin, int line) {
  std::vector<std::string> out;
  for (const std::string& item : split_top(body, ',')) {
    size_t dash = item.find('-');
    std::string lo = item.substr(0, dash);
    std::string hi = dash == std::string::npos ? lo : item.substr(dash + 1);
    if (!all_digits(lo) || !all_digits(hi) || lo.size() > 9 || hi.size() > 9) {
      fail(origin, line, "bad range '" + item + "' in host list");
    }
    long a = std::stol(lo), b = std::stol(hi);
    if (b < a) fail(origin, line, "range '" + item + "' runs backwards");
    if (static_cast<size_t>(b - a) >= kMaxExpansion)
      fail(origin, line, "range '" + item + "' too large");
    for (long v = a; v <= b; ++v) {
      std::string digits = std::to_string(v);
      if (digits.size() < lo.size()) digits.insert(0, lo.size() - digits.size(), '0');
      out.push_back(std::move(digits));
    }
  }
  return out;
}

std::vector<std::string> expand_at(std::string_view pattern, std::string_view origin, int line) {
  size_t open = pattern.find('[');
  if (open == std::string_view::npos) {
    if (pattern.find(']') != std::string_view::npos) {
      fail(origin, line, "unbalanced ']' in '" + std::string(pattern) + "'");
    }
    return {std::string(pattern)};
  }
  size_t close = pattern.find(']', open);
  if (close == std::string_view::npos) {
    fail(origin, line, "unbalanced '[' in '" + std::string(pattern) + "'");
  }
  std::string prefix(pattern.substr(0, open));
  std::vector<std::string> middles =
      expand_group(pattern.substr(open + 1, close - open - 1), origin, line);
  std::vector<std::string> tails = expand_at(pattern.substr(close + 1), origin, line);
  if (middles.size() * tails.size() > kMaxExpansion) {
    fail(origin, line, "host list '" + std::string(pattern) + "' expands to too many names");
  }
  std::vector<std::string> out;
  out.reserve(middles.size() * tails.size());
  for (const auto& m : middles) {
    for (const auto& t : tails) out.push_back(prefix + m + t);
  }
  return out;
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view pattern, std::string_view origin) {
  return expand_at(pattern, origin, 0);
}

TopologyMap TopologyMap::parse(std::string_view text, std::string_view origin) {
  TopologyMap map;
  std::istringstream in{std::string(text)};
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    if (size_t hash = raw.find('#'); hash != std::string::npos) raw.resize(hash);
    std::istringstream fields(raw);
    std::string nodes, domain, extra;
    if (!(fields >> nodes)) continue;  // blank or comment-only
    if (!(fields >> domain)) fail(origin, line, "rule '" + nodes + "' has no domain");
    if (fields >> extra) fail(origin, line, "unexpected third field '" + extra + "'");
    Rule rule;
    rule.domain = domain;
    if (nodes.rfind("node:", 0) == 0) {
      for (const std::string& item : split_top(nodes.substr(5), ',')) {
        size_t dash = item.find('-');
        int a = parse_index(item.substr(0, dash), origin, line);
        int b = dash == std::string::npos ? a : parse_index(item.substr(dash + 1), origin, line);
        if (b < a) fail(origin, line, "node range '" + item + "' runs backwards");
        rule.node_ranges.emplace_back(a, b);
      }
    } else {
      for (const std::string& part : split_top(nodes, ',')) {
        if (part.empty()) fail(origin, line, "empty host name in '" + nodes + "'");
        for (auto& h : expand_at(part, origin, line)) rule.host_patterns.push_back(std::move(h));
      }
    }
    map.rules_.push_back(std::move(rule));
  }
  return map;
}

TopologyMap TopologyMap::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    throw ConfigError("topology file '" + path +
                      "' cannot be read (config key topology_file / WEFT_TOPOLOGY_FILE)");
  }
  std::ostringstream text;
  text << f.rdbuf();
  return parse(text.str(), path);
}

std::optional<std::string> TopologyMap::domain_of(std::string_view hostname, int node_index) const {
  std::string host(hostname);
  for (const Rule& r : rules_) {
    for (const auto& [a, b] : r.node_ranges) {
      if (node_index >= a && node_index <= b) return r.domain;
    }
    for (const std::string& p : r.host_patterns) {
      if (fnmatch(p.c_str(), host.c_str(), 0) == 0) return r.domain;
    }
  }
  return std::nullopt;
}

}  // namespace weft::gpu
