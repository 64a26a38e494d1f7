#include "sched/resource_set.hpp"

#include <algorithm>
#include <cmath>

#include "weft/errors.hpp"

namespace weft::sched {
namespace {

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

uint64_t get_varint(std::string_view* in) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in->empty()) throw SerializationError("ResourceSet bytes truncated inside a varint");
    auto b = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw SerializationError("ResourceSet bytes hold a varint longer than 64 bits");
}

// The first entry whose name is not below `name`, by text: where a new name goes.
template <class Iter>
inline Iter lower_entry(Iter first, Iter last, ResourceName name) {
  return std::lower_bound(first, last, name,
                          [](const ResourceSet::Entry& e, ResourceName n) { return e.first < n; });
}

// A set names one to a few resources: a scan of pointer compares finds an interned name.
template <class Iter>
inline Iter find_entry(Iter first, Iter last, ResourceName name) {
  for (; first != last; ++first)
    if (first->first == name) return first;
  return last;
}

}  // namespace

ResourceSet::ResourceSet(std::initializer_list<std::pair<std::string, double>> items) {
  for (const auto& [name, amount] : items) set(name, amount);
}

int64_t ResourceSet::to_units(double amount) {
  return static_cast<int64_t>(std::llround(amount * kUnit));
}

void ResourceSet::set(std::string_view name, double amount) { set_units(name, to_units(amount)); }

void ResourceSet::set_units(ResourceName name, int64_t units) {
  if (auto it = find_entry(entries_.begin(), entries_.end(), name); it != entries_.end()) {
    if (units == 0) {
      entries_.erase(it);
    } else {
      it->second = units;
    }
  } else if (units != 0) {
    entries_.insert(lower_entry(entries_.begin(), entries_.end(), name), Entry(name, units));
  }
}

int64_t ResourceSet::units(ResourceName name) const {
  auto it = find_entry(entries_.begin(), entries_.end(), name);
  return it != entries_.end() ? it->second : 0;
}

int64_t ResourceSet::units(std::string_view name) const {
  for (const auto& [n, u] : entries_)
    if (n == name) return u;
  return 0;
}

double ResourceSet::get(std::string_view name) const { return to_double(units(name)); }

bool ResourceSet::fits_in(const ResourceSet& cap) const {
  // Merge walk: both sides are sorted, so this is linear and allocation-free.
  auto c = cap.entries_.begin();
  for (const auto& [name, need] : entries_) {
    while (c != cap.entries_.end() && c->first < name) ++c;
    int64_t have = (c != cap.entries_.end() && c->first == name) ? c->second : 0;
    if (need > have) return false;
  }
  return true;
}

bool ResourceSet::fits_beside(const ResourceSet& used, const ResourceSet& cap) const {
  for (const auto& [name, need] : entries_)
    if (used.units(name) + need > cap.units(name)) return false;
  return true;
}

void ResourceSet::add_units(ResourceName name, int64_t delta) {
  // One search per name (units() then set_units() searched twice): the executor's gate adds and
  // takes back every task's demand.
  if (auto it = find_entry(entries_.begin(), entries_.end(), name); it != entries_.end()) {
    it->second += delta;
    if (it->second == 0) entries_.erase(it);
  } else if (delta != 0) {
    entries_.insert(lower_entry(entries_.begin(), entries_.end(), name), Entry(name, delta));
  }
}

ResourceSet& ResourceSet::operator+=(const ResourceSet& other) {
  for (const auto& [name, u] : other.entries_) add_units(name, u);
  return *this;
}

ResourceSet& ResourceSet::operator-=(const ResourceSet& other) {
  for (const auto& [name, u] : other.entries_) add_units(name, -u);
  return *this;
}

bool ResourceSet::any_negative() const {
  return std::any_of(entries_.begin(), entries_.end(), [](const Entry& e) { return e.second < 0; });
}

std::string ResourceSet::format_units(int64_t units) {
  std::string s = units < 0 ? "-" : "";
  uint64_t a = units < 0 ? uint64_t(-units) : uint64_t(units);
  s += std::to_string(a / kUnit);
  uint64_t frac = a % kUnit;
  if (frac != 0) {
    std::string f = std::to_string(frac);
    f.insert(0, 4 - f.size(), '0');
    while (f.back() == '0') f.pop_back();
    s += "." + f;
  }
  return s;
}

std::string ResourceSet::str() const {
  std::string s = "{";
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i) s += ", ";
    s += entries_[i].first.str() + ": " + format_units(entries_[i].second);
  }
  return s + "}";
}

void ResourceSet::append_bytes(std::string* out) const {
  put_varint(out, entries_.size());
  for (const auto& [name, u] : entries_) {
    put_varint(out, name.str().size());
    out->append(name.str());
    put_varint(out, (uint64_t(u) << 1) ^ uint64_t(u >> 63));  // zigzag
  }
}

std::string ResourceSet::to_bytes() const {
  std::string out;
  append_bytes(&out);
  return out;
}

ResourceSet ResourceSet::read_bytes(std::string_view* in) {
  uint64_t n = get_varint(in);
  if (n > in->size())
    throw SerializationError("ResourceSet bytes claim " + std::to_string(n) + " entries in " +
                             std::to_string(in->size()) + " bytes");
  ResourceSet rs;
  rs.entries_.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t len = get_varint(in);
    if (len > in->size()) throw SerializationError("ResourceSet bytes truncated inside a name");
    const std::string_view text = in->substr(0, len);
    in->remove_prefix(len);
    uint64_t z = get_varint(in);
    auto u = static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
    if (u == 0 || (!rs.entries_.empty() && rs.entries_.back().first.str() >= text)) {
      throw SerializationError("ResourceSet bytes are not a canonical set (entry '" +
                               std::string(text) + "')");
    }
    rs.entries_.emplace_back(ResourceName(text), u);
  }
  return rs;
}

ResourceSet ResourceSet::from_bytes(std::string_view bytes) {
  ResourceSet rs = read_bytes(&bytes);
  if (!bytes.empty()) {
    throw SerializationError("ResourceSet bytes have " + std::to_string(bytes.size()) +
                             " trailing bytes");
  }
  return rs;
}

}  // namespace weft::sched
