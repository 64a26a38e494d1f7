#include "common/settings.hpp"

#include <algorithm>
#include <cctype>

namespace weft {
namespace {

using K = SettingKind;
constexpr double kGiB16 = 17179869184.0;

const std::vector<Setting>& table() {
  // clang-format off
  static const std::vector<Setting> t = {
    // Resources
    {"resources", K::kString, "", "none: the detected resources", "this job's per-rank resources, e.g. \"CPU=2;GPU=1;1-3:special=1\""},
    {"num_cpus", K::kDouble, "", "cores available to the process / ranks on the node (at least 1)", "the rank's CPU resource", {}, 0.0},
    {"gpus_per_rank", K::kDouble, "", "unset: the host's GPUs split evenly among its ranks", "GPUs each rank takes from its host", {}, 0.0},
    {"worker_threads", K::kInt, "", "max(4, 2 x ceil(CPU))", "executor threads per rank", {}, 1.0},
    // Topology
    {"virtual_nodes", K::kInt, "1", "", "split each host's ranks into this many virtual nodes", {}, 1.0, 1048576.0},
    {"nvlink_domain", K::kString, "", "unset", "this node's NVLink domain name"},
    {"topology_file", K::kString, "", "unset", "file mapping hosts to NVLink domains"},
    // Objects and the store
    {"inline_threshold", K::kBytes, "100K", "", "values up to this size travel inside messages", {}, 0.0},
    {"inline_owner_limit", K::kBytes, "256M", "", "bytes of small values a rank may own in its heap", {}, 0.0},
    {"object_store_memory", K::kBytes, "", "30 % of physical memory / virtual nodes on the host", "the node store's capacity", {}, 1.0},
    {"object_store_spill_threshold", K::kDouble, "0.8", "", "spill primaries once primary bytes / capacity reach this", {}, 0.0, 1.0},
    {"spill_limit", K::kBytes, "0", "", "bytes on disk for spill and fallback files (0: bounded by the disk)", {}, 0.0},
    {"object_store_alloc_timeout_ms", K::kInt, "2000", "", "how long an allocation waits before a file-backed fallback", {}, 0.0},
    {"object_store_max_objects", K::kInt, "65536", "", "object table entries per node", {}, 1.0, 4294967295.0},
    // Transport
    {"ring_bytes", K::kBytes, "1M", "", "each same-node rank-to-rank ring", {}, 4096.0, kGiB16},
    {"credits", K::kInt, "64", "", "messages in flight per peer between nodes", {}, 1.0},
    {"batch_bytes", K::kBytes, "64K", "", "small messages coalesced into one UCX active message", {}, 1.0},
    {"rma_chunk_bytes", K::kBytes, "4M", "", "chunk of a cross-node object read", {}, 1.0},
    {"rma_depth", K::kInt, "4", "", "chunks in flight per read", {}, 1.0},
    {"liveness_interval_ms", K::kInt, "100", "", "how often a rank checks its host's other ranks still exist (0: off)", {}, 0.0},
    {"transfer", K::kEnum, "ucx", "", "how cross-node object reads move the bytes", {"ucx", "mpi"}},
    {"ucx_wakeup", K::kBool, "true", "", "idle ranks sleep until UCX traffic arrives"},
    // Event loop and logging
    {"steal_delay_us", K::kInt, "200", "", "work stealing: how long before a backlog is shared or work is asked for", {}, 0.0},
    {"loop_spin_us", K::kInt, "50", "", "how long an idle event loop spins before yielding", {}, 0.0},
    {"loop_yield_us", K::kInt, "300", "", "how long it yields before parking", {}, 0.0},
    {"inline_tasks", K::kBool, "true", "", "a task admitted on the loop thread runs there"},
    {"log_level", K::kEnum, "warn", "", "the least severe log lines printed", {"error", "warn", "warning", "info", "debug", "trace"}},
  };
  // clang-format on
  return t;
}

std::string normalize(std::string_view name) {
  std::string k(name);
  for (char& c : k) {
    c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return k;
}

}  // namespace

std::span<const Setting> all_settings() { return table(); }

const Setting* find_setting(std::string_view name) {
  const std::string k = normalize(name);
  for (const Setting& s : table()) {
    if (s.name == k) return &s;
  }
  return nullptr;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus the swap of two neighbours, the commonest typo.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::optional<std::string_view> closest_setting(std::string_view name) {
  const std::string k = normalize(name);
  std::optional<std::string_view> best;
  size_t best_d = 0;
  for (const Setting& s : table()) {
    const size_t d = edit_distance(k, s.name);
    if (!best || d < best_d) {
      best = s.name;
      best_d = d;
    }
  }
  // Close enough to be a slip of the keyboard: a third of the name, and at least 2 edits.
  const size_t limit = std::max<size_t>(2, k.size() / 3);
  if (!best || best_d > limit) return std::nullopt;
  return best;
}

std::string describe_kind(const Setting& s) {
  switch (s.kind) {
    case SettingKind::kInt: return "an integer";
    case SettingKind::kBytes:
      return "a byte size such as 4096, 64K, 1.5MiB or 2G (units: docs/operations.md)";
    case SettingKind::kBool: return "true or false (also 1/0, yes/no, on/off)";
    case SettingKind::kDouble: return "a number";
    case SettingKind::kEnum: {
      std::string out = "one of ";
      for (size_t i = 0; i < s.allowed.size(); ++i) {
        out += (i == 0 ? "" : i + 1 == s.allowed.size() ? " or " : ", ") + std::string(s.allowed[i]);
      }
      return out;
    }
    case SettingKind::kString: return "a string";
  }
  return "a value";
}

}  // namespace weft
