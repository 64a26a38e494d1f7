// Distributed reference counting, the part the public templates see: a collector that records
// which refs were serialized into one blob (task arguments, a result, a put value), so the
// runtime can register the blob's receiver as a borrower of each before the blob leaves this
// rank (src/core/refcount.cpp; docs/architecture.md, "Reference counting").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "weft/detail/object_state.hpp"

namespace weft::detail {

// While it lives, refs serialized on this thread are appended to `*out`. Collectors nest: an
// inner one (a task submitted from inside a task body) collects alone, and the outer resumes
// when it ends.
class RefCollector {
 public:
  explicit RefCollector(std::vector<StatePtr>* out) noexcept;
  ~RefCollector();
  RefCollector(const RefCollector&) = delete;
  RefCollector& operator=(const RefCollector&) = delete;

 private:
  std::vector<StatePtr>* prev_;
};

// Called by ObjectRef::save. Outside any collector (a user serializing a ref by hand), the ref
// cannot be tracked: its state is then kept until the job ends.
void note_serialized(const StatePtr& s);

// Sorts and removes duplicates (one credit per object per message).
void dedupe_refs(std::vector<StatePtr>& refs);

// This rank's reference tables (tests, benchmarks, `weft status`).
struct RefTableInfo {
  size_t objects = 0;         // live object states on this rank (owned and borrowed)
  size_t borrowed = 0;        // owner: objects that other ranks (or messages in flight) borrow
  uint64_t borrow_count = 0;  // owner: the sum of their counts
  size_t pinned = 0;          // states kept until the job ends (refs serialized outside Weft)
};
RefTableInfo ref_table_info();

}  // namespace weft::detail
