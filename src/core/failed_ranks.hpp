// The ranks this rank knows have failed: reported by the transport, or named by the head's
// kShutdown. Nothing is sent to them, their credits are dropped, and their objects fate-share.
#pragma once

#include <vector>

namespace weft::core {

class FailedRanks {
 public:
  explicit FailedRanks(int size) : dead_(size > 0 ? size : 0, 0) {}
  bool contains(int rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < dead_.size() && dead_[rank];
  }
  // False when `rank` was known failed already, or is not a rank of the job.
  bool add(int rank) {
    if (rank < 0 || static_cast<size_t>(rank) >= dead_.size() || dead_[rank]) return false;
    dead_[rank] = 1;
    return true;
  }
  std::vector<int> list() const {
    std::vector<int> out;
    for (size_t r = 0; r < dead_.size(); ++r)
      if (dead_[r]) out.push_back(static_cast<int>(r));
    return out;
  }

 private:
  std::vector<char> dead_;
};

}  // namespace weft::core
