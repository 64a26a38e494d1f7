// ResourceSet: resource name -> amount, the unit every scheduling decision is made of.
// Amounts are fixed-point (1/10000 of a unit) so that fractional GPUs (0.25 + 0.25 + 0.5) add up
// to exactly 1 and a release always undoes its allocation bit for bit; doubles would drift.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/resource_name.hpp"

namespace weft::sched {

class ResourceSet {
 public:
  static constexpr int64_t kUnit = 10000;  // fixed-point units per 1.0
  // Names are interned (resource_name.hpp): lookups by ResourceName compare pointers.
  using Entry = std::pair<ResourceName, int64_t>;

  ResourceSet() = default;
  ResourceSet(std::initializer_list<std::pair<std::string, double>> items);

  // Amount 0 removes the name: an absent name and a zero amount are the same thing.
  void set(std::string_view name, double amount);
  void set(ResourceName name, double amount) { set_units(name, to_units(amount)); }
  void set_units(std::string_view name, int64_t units) { set_units(ResourceName(name), units); }
  void set_units(ResourceName name, int64_t units);
  double get(std::string_view name) const;
  double get(ResourceName name) const { return to_double(units(name)); }
  int64_t units(std::string_view name) const;
  int64_t units(ResourceName name) const;

  // ∀k: this(k) ≤ capacity(k), where a name absent from capacity counts as 0.
  bool fits_in(const ResourceSet& capacity) const;
  // ∀k: used(k) + this(k) ≤ capacity(k) — fits_in(capacity − used) without building either set
  // (the executor's gate asks this for every task).
  bool fits_beside(const ResourceSet& used, const ResourceSet& capacity) const;
  ResourceSet& operator+=(const ResourceSet& other);
  ResourceSet& operator-=(const ResourceSet& other);
  friend ResourceSet operator+(ResourceSet a, const ResourceSet& b) { return a += b; }
  friend ResourceSet operator-(ResourceSet a, const ResourceSet& b) { return a -= b; }
  friend bool operator==(const ResourceSet&, const ResourceSet&) = default;

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  // True when some amount is below zero (a release without a matching allocation).
  bool any_negative() const;
  // "{CPU: 2, GPU: 0.5}"; names in sorted order so the text is deterministic.
  std::string str() const;

  // Iteration in name order over (name, fixed-point units).
  using Entries = boost::container::small_vector<Entry, 2>;
  const Entries& entries() const { return entries_; }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

  // Compact bytes for messages: varint count, then per entry varint name length, name, zigzag
  // varint units. from_bytes throws weft::SerializationError on a truncated or malformed buffer.
  std::string to_bytes() const;
  void append_bytes(std::string* out) const;
  static ResourceSet from_bytes(std::string_view bytes);
  // Reads one set from the front of `*in` and advances it (sets embedded in larger messages).
  static ResourceSet read_bytes(std::string_view* in);

  static int64_t to_units(double amount);
  static double to_double(int64_t units) { return static_cast<double>(units) / kUnit; }
  // "2", "0.5", "0.0001": the shortest exact decimal of a fixed-point amount.
  static std::string format_units(int64_t units);

 private:
  void add_units(ResourceName name, int64_t delta);
  // Sorted by name, no zero amounts. A task's demand names one or two resources: kept inline,
  // the copies a submission makes (its call, the in-flight record, the executor's item) cost no
  // heap allocation.
  Entries entries_;
};

}  // namespace weft::sched
