#include "sched/fit_index.hpp"

#include <algorithm>
#include <limits>

namespace weft::sched {
namespace {
// Padding leaves can never satisfy a demand, not even a demand of zero.
constexpr int64_t kNone = std::numeric_limits<int64_t>::min() / 4;
}  // namespace

FitIndex::FitIndex(int n, int columns) : n_(n), cols_(columns) {
  leaf0_ = 1;
  while (leaf0_ < n_) leaf0_ <<= 1;
  tree_.assign(size_t(2) * leaf0_ * std::max(cols_, 1), kNone);
}

void FitIndex::set(int i, const int64_t* values) {
  size_t k = size_t(leaf0_) + i;
  std::copy(values, values + cols_, &tree_[k * cols_]);
  for (k >>= 1; k >= 1; k >>= 1) {
    int64_t* dst = &tree_[k * cols_];
    const int64_t* l = &tree_[2 * k * cols_];
    const int64_t* r = l + cols_;
    bool changed = false;
    for (int c = 0; c < cols_; ++c) {
      int64_t m = std::max(l[c], r[c]);
      changed |= dst[c] != m;
      dst[c] = m;
    }
    if (!changed) break;  // ancestors already hold these maxima
  }
}

bool FitIndex::covers(int node, const int64_t* need) const {
  const int64_t* v = &tree_[size_t(node) * cols_];
  for (int c = 0; c < cols_; ++c) {
    if (v[c] < need[c]) return false;
  }
  return true;
}

int FitIndex::find(int node, int lo, int hi, const int64_t* need, int from, int to) const {
  if (hi <= from || lo >= to || !covers(node, need)) return -1;
  if (hi - lo == 1) return lo;
  int mid = (lo + hi) / 2;
  int r = find(2 * node, lo, mid, need, from, to);
  return r >= 0 ? r : find(2 * node + 1, mid, hi, need, from, to);
}

int FitIndex::find_first(const int64_t* need, int from, int to) const {
  from = std::max(from, 0);
  to = std::min(to, n_);
  if (n_ == 0 || from >= to) return -1;
  return find(1, 0, leaf0_, need, from, to);
}

int FitIndex::find_circular(const int64_t* need, int start) const {
  if (n_ == 0) return -1;
  start = ((start % n_) + n_) % n_;
  int r = find_first(need, start, n_);
  return r >= 0 ? r : find_first(need, 0, start);
}

int FitIndex::argmax(int c) const {
  if (n_ == 0) return -1;
  size_t k = 1;
  while (k < size_t(leaf0_)) {
    k = tree_[2 * k * cols_ + c] >= tree_[(2 * k + 1) * cols_ + c] ? 2 * k : 2 * k + 1;
  }
  return static_cast<int>(k - leaf0_);
}

}  // namespace weft::sched
