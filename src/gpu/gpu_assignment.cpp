#include "gpu/gpu_assignment.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "common/check.hpp"
#include "weft/errors.hpp"

namespace weft::gpu {
namespace {

bool is_whole(double x) { return std::fabs(x - std::round(x)) < 1e-9; }

std::string range_text(const std::vector<int>& d) {
  if (d.empty()) return "none";
  std::ostringstream os;
  for (size_t i = 0; i < d.size(); ++i) os << (i ? "," : "") << d[i];
  return os.str();
}

}  // namespace

RankGpus split_gpus(int n, int r, int size, double per_rank) {
  WEFT_CHECK(size > 0 && r >= 0 && r < size && n >= 0)
      << "local_rank " << r << " local_size " << size << " devices " << n;
  RankGpus out;
  std::ostringstream how;
  if (n == 0 || per_rank == 0) {
    how << (n == 0 ? "no GPUs on this node" : "gpus_per_rank=0: this rank takes no GPU");
  } else if (per_rank < 0) {
    if (n >= size) {
      // Every device is used; the first n % size ranks take one more than the others.
      int base = n / size, extra = n % size;
      int first = r * base + std::min(r, extra);
      int count = base + (r < extra ? 1 : 0);
      for (int i = 0; i < count; ++i) out.devices.push_back(first + i);
      out.gpus = count;
    } else {
      // More ranks than devices: neighbouring ranks share one device, in equal fractions.
      int dev = static_cast<int>(static_cast<int64_t>(r) * n / size);
      int sharing = 0;
      for (int q = 0; q < size; ++q) sharing += static_cast<int64_t>(q) * n / size == dev;
      out.devices.push_back(dev);
      out.gpus = 1.0 / sharing;
    }
    how << "even split of " << n << " GPUs among " << size << " local ranks";
  } else if (per_rank >= 1) {
    if (!is_whole(per_rank)) {
      throw ConfigError("gpus_per_rank=" + std::to_string(per_rank) +
                        " must be a whole number when >= 1 (or 1/k below 1, to share a GPU)");
    }
    int g = static_cast<int>(std::lround(per_rank));
    if (static_cast<int64_t>(g) * size > n) {
      throw ConfigError("gpus_per_rank=" + std::to_string(g) + " needs " +
                        std::to_string(static_cast<int64_t>(g) * size) + " GPUs for the " +
                        std::to_string(size) + " ranks of this node, but it has " +
                        std::to_string(n) + "; start fewer ranks per node or lower gpus_per_rank");
    }
    for (int i = 0; i < g; ++i) out.devices.push_back(r * g + i);
    out.gpus = g;
    how << "gpus_per_rank=" << g;
  } else {
    double k_real = 1.0 / per_rank;
    if (!is_whole(k_real)) {
      throw ConfigError("gpus_per_rank=" + std::to_string(per_rank) +
                        " below 1 must be 1/k (0.5, 0.25, ...) so that k ranks share a GPU");
    }
    int k = static_cast<int>(std::lround(k_real));
    int needed = (size + k - 1) / k;
    if (needed > n) {
      throw ConfigError("gpus_per_rank=" + std::to_string(per_rank) + " needs " +
                        std::to_string(needed) + " GPUs for the " + std::to_string(size) +
                        " ranks of this node, but it has " + std::to_string(n));
    }
    out.devices.push_back(r / k);
    out.gpus = per_rank;
    how << k << " ranks per GPU (gpus_per_rank=" << per_rank << ")";
  }
  how << "; local rank " << r << " -> device(s) " << range_text(out.devices);
  out.how = how.str();
  return out;
}

RankGpus plan_rank_gpus(const std::vector<std::vector<std::string>>& views, int r,
                        double per_rank) {
  WEFT_CHECK(r >= 0 && static_cast<size_t>(r) < views.size())
      << "local_rank " << r << " of " << views.size() << " views";
  bool same = std::all_of(views.begin(), views.end(), [&](const auto& v) { return v == views[0]; });
  if (same) return split_gpus(static_cast<int>(views[0].size()), r, views.size(), per_rank);

  // The launcher already bound devices to ranks: keep that binding, count shared devices in part.
  std::map<std::string, int> seen_by;
  for (const auto& v : views) {
    for (const auto& u : v) ++seen_by[u];
  }
  RankGpus out;
  for (size_t i = 0; i < views[r].size(); ++i) {
    out.devices.push_back(static_cast<int>(i));
    out.gpus += 1.0 / seen_by[views[r][i]];
  }
  std::ostringstream how;
  how << "launcher-bound GPUs (local ranks see different devices): local rank " << r
      << " keeps its " << views[r].size() << " visible device(s) -> " << range_text(out.devices);
  if (per_rank >= 0) how << " (gpus_per_rank ignored)";
  out.how = how.str();
  return out;
}

std::string RankGpuView::to_bytes() const {
  std::string out = host;
  for (const auto& u : uuids) out += "\n" + u;
  return out;
}

RankGpuView RankGpuView::from_bytes(const std::string& bytes) {
  RankGpuView v;
  std::istringstream in(bytes);
  std::getline(in, v.host);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.uuids.push_back(line);
  return v;
}

RankGpus plan_host_gpus(const std::vector<RankGpuView>& views_by_rank, int rank,
                        double per_rank) {
  WEFT_CHECK(rank >= 0 && static_cast<size_t>(rank) < views_by_rank.size())
      << "rank " << rank << " of " << views_by_rank.size() << " views";
  if (per_rank == 0) return RankGpus{{}, 0, "gpus_per_rank=0: no GPUs"};
  std::vector<std::vector<std::string>> local;
  int local_rank = 0;
  for (size_t r = 0; r < views_by_rank.size(); ++r) {
    if (views_by_rank[r].host != views_by_rank[rank].host) continue;
    if (static_cast<int>(r) == rank) local_rank = static_cast<int>(local.size());
    local.push_back(views_by_rank[r].uuids);
  }
  bool none = std::all_of(local.begin(), local.end(), [](const auto& v) { return v.empty(); });
  if (none) return RankGpus{{}, 0, "no GPU visible on host " + views_by_rank[rank].host};
  return plan_rank_gpus(local, local_rank, per_rank);
}

double gpus_per_rank_from(const Config& config) {
  if (!config.has("gpus_per_rank")) return -1;
  double g = config.get_double("gpus_per_rank", -1);
  if (g < 0) {
    throw ConfigError("gpus_per_rank=" + config.get("gpus_per_rank", "") +
                      " must be >= 0 (unset means an even split)");
  }
  return g;
}

}  // namespace weft::gpu
