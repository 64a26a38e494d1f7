#include "sched/resource_spec.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

#include "common/config.hpp"
#include "weft/errors.hpp"

namespace weft::sched {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail(std::string_view item, const std::string& why) {
  throw ConfigError("resource spec item '" + std::string(item) + "': " + why +
                    " (expected e.g. \"CPU=2;GPU=1;1-3:special=1\")");
}

int parse_rank(std::string_view s, std::string_view item) {
  s = trim(s);
  int v = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0) {
    fail(item, "rank '" + std::string(s) + "' is not a non-negative integer");
  }
  return v;
}

bool valid_name(std::string_view n) {
  if (n.empty()) return false;
  for (char c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' &&
        c != '/') {
      return false;
    }
  }
  return true;
}

double parse_amount(std::string_view name, std::string_view text, std::string_view item) {
  text = trim(text);
  if (text.empty()) fail(item, "missing amount for '" + std::string(name) + "'");
  if ((name == "memory" || name == "object_store_memory") &&
      std::isalpha(static_cast<unsigned char>(text.back()))) {
    return static_cast<double>(Config::parse_bytes(text, name));
  }
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) {
    fail(item, "amount '" + std::string(text) + "' is not a number");
  }
  if (v < 0) fail(item, "amount " + std::string(text) + " is negative");
  if (v > 0 && v < 1.0 / ResourceSet::kUnit) {
    fail(item, "amount " + std::string(text) + " is below the resolution 0.0001");
  }
  return v;
}

// Calls fn(name, amount) for every item of `spec` that applies to `rank`, validating all.
template <class Fn>
void visit_spec(const std::string& spec, int rank, Fn fn) {
  std::string_view rest(spec);
  while (!rest.empty()) {
    size_t semi = rest.find(';');
    std::string_view item = trim(rest.substr(0, semi));
    rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
    if (item.empty()) continue;  // tolerate "CPU=1;" and ";;"

    std::string_view body = item;
    bool applies = true;
    if (size_t colon = item.find(':'); colon != std::string_view::npos) {
      std::string_view range = item.substr(0, colon);
      body = item.substr(colon + 1);
      size_t dash = range.find('-');
      int lo = parse_rank(range.substr(0, dash), item);
      int hi = dash == std::string_view::npos ? lo : parse_rank(range.substr(dash + 1), item);
      if (hi < lo) fail(item, "rank range " + std::string(range) + " is empty (end before start)");
      applies = rank >= lo && rank <= hi;
    }
    size_t eq = body.find('=');
    if (eq == std::string_view::npos) fail(item, "missing '=' between name and amount");
    std::string_view name = trim(body.substr(0, eq));
    if (!valid_name(name)) {
      fail(item, "resource name '" + std::string(name) +
                     "' is empty or has characters other than letters, digits, _ - . /");
    }
    double amount = parse_amount(name, body.substr(eq + 1), item);  // validate even if unused
    if (applies) fn(name, amount);
  }
}

}  // namespace

ResourceSet parse_resource_spec(const std::string& spec, int rank) {
  ResourceSet out;
  visit_spec(spec, rank, [&](std::string_view name, double amount) {
    out.set(std::string(name), amount);
  });
  return out;
}

bool resource_spec_sets(const std::string& spec, int rank, std::string_view name) {
  bool found = false;
  visit_spec(spec, rank, [&](std::string_view n, double) { found = found || n == name; });
  return found;
}

}  // namespace weft::sched
