// FitIndex: a tournament tree over n items (ranks or nodes) holding, per column (resource), the
// maximum free amount in each subtree. "First item at or after position p whose free amounts
// cover a demand" descends the tree and skips every subtree whose maxima fall short, so a query
// costs O(log n) on a homogeneous cluster instead of a scan of all ranks. The bound is exact for
// one column and a good filter for several (a subtree may hold the CPU max on one rank and the
// GPU max on another; the descent then backtracks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft::sched {

class FitIndex {
 public:
  FitIndex() = default;
  FitIndex(int n, int columns);

  int size() const { return n_; }
  int columns() const { return cols_; }
  // Sets item i's free amounts (columns() values).
  void set(int i, const int64_t* values);
  const int64_t* item(int i) const { return &tree_[size_t(leaf0_ + i) * cols_]; }
  // Column maxima over all items.
  const int64_t* root() const { return &tree_[size_t(1) * cols_]; }
  // Smallest i in [from, to) with item(i)[c] ≥ need[c] for every c; -1 if none.
  int find_first(const int64_t* need, int from, int to) const;
  // find_first from `start` to the end, then wrapping around from 0 (circular scan order).
  int find_circular(const int64_t* need, int start) const;
  // An item holding the maximum of column c (the lowest such index); -1 when empty.
  int argmax(int c) const;

 private:
  int find(int node, int lo, int hi, const int64_t* need, int from, int to) const;
  bool covers(int node, const int64_t* need) const;

  int n_ = 0, cols_ = 0, leaf0_ = 1;
  std::vector<int64_t> tree_;  // heap layout: node k at [k*cols, (k+1)*cols)
};

}  // namespace weft::sched
