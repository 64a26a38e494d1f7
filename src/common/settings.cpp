#include "common/settings.hpp"

#include <algorithm>
#include <cctype>

namespace weft {
namespace {

using K = SettingKind;
constexpr double kGiB16 = 17179869184.0;

// Each entry: name, kind, the default (as the code applies it, or empty with default_doc saying
// what happens), a one-line doc, and for some kinds the allowed values or the range.
const std::vector<Setting>& table() {
  static const std::vector<Setting> t = {
      // Resources
      {.name = "resources",
       .kind = K::kString,
       .default_doc = "none: the detected resources",
       .doc = "this job's per-rank resources, e.g. \"CPU=2;GPU=1;1-3:special=1\""},
      {.name = "num_cpus",
       .kind = K::kDouble,
       .default_doc = "cores available to the process / ranks on the node (at least 1)",
       .doc = "the rank's CPU resource",
       .min = 0.0},
      {.name = "gpus_per_rank",
       .kind = K::kDouble,
       .default_doc = "unset: the host's GPUs split evenly among its ranks",
       .doc = "GPUs each rank takes from its host",
       .min = 0.0},
      {.name = "worker_threads",
       .kind = K::kInt,
       .default_doc = "max(4, 2 x ceil(CPU))",
       .doc = "executor threads per rank",
       .min = 1.0},
      // Topology
      {.name = "virtual_nodes",
       .kind = K::kInt,
       .default_value = "1",
       .doc = "split each host's ranks into this many virtual nodes",
       .min = 1.0,
       .max = 1048576.0},
      {.name = "nvlink_domain",
       .kind = K::kString,
       .default_doc = "unset",
       .doc = "this node's NVLink domain name"},
      {.name = "topology_file",
       .kind = K::kString,
       .default_doc = "unset",
       .doc = "file mapping hosts to NVLink domains"},
      // Objects and the store
      {.name = "inline_threshold",
       .kind = K::kBytes,
       .default_value = "100K",
       .doc = "values up to this size travel inside messages",
       .min = 0.0},
      {.name = "inline_owner_limit",
       .kind = K::kBytes,
       .default_value = "256M",
       .doc = "bytes of small values a rank may own in its heap",
       .min = 0.0},
      {.name = "object_store_memory",
       .kind = K::kBytes,
       .default_doc = "30 % of physical memory / virtual nodes on the host",
       .doc = "the node store's capacity",
       .min = 1.0},
      {.name = "object_store_spill_threshold",
       .kind = K::kDouble,
       .default_value = "0.8",
       .doc = "spill primaries once primary bytes / capacity reach this",
       .min = 0.0,
       .max = 1.0},
      {.name = "spill_limit",
       .kind = K::kBytes,
       .default_value = "0",
       .doc = "bytes on disk for spill and fallback files (0: bounded by the disk)",
       .min = 0.0},
      {.name = "object_store_alloc_timeout_ms",
       .kind = K::kInt,
       .default_value = "2000",
       .doc = "how long an allocation waits before a file-backed fallback",
       .min = 0.0},
      {.name = "object_store_max_objects",
       .kind = K::kInt,
       .default_value = "65536",
       .doc = "object table entries per node",
       .min = 1.0,
       .max = 4294967295.0},
      // Transport
      {.name = "ring_bytes",
       .kind = K::kBytes,
       .default_value = "1M",
       .doc = "each same-node rank-to-rank ring",
       .min = 4096.0,
       .max = kGiB16},
      {.name = "credits",
       .kind = K::kInt,
       .default_value = "64",
       .doc = "messages in flight per peer between nodes",
       .min = 1.0},
      {.name = "batch_bytes",
       .kind = K::kBytes,
       .default_value = "64K",
       .doc = "small messages coalesced into one UCX active message",
       .min = 1.0},
      {.name = "rma_chunk_bytes",
       .kind = K::kBytes,
       .default_value = "4M",
       .doc = "chunk of a cross-node object read",
       .min = 1.0},
      {.name = "rma_depth",
       .kind = K::kInt,
       .default_value = "4",
       .doc = "chunks in flight per read",
       .min = 1.0},
      {.name = "liveness_interval_ms",
       .kind = K::kInt,
       .default_value = "100",
       .doc = "how often a rank checks its host's other ranks still exist (0: off)",
       .min = 0.0},
      {.name = "failure_timeout_ms",
       .kind = K::kInt,
       .default_value = "500",
       .doc = "a rank silent this long (no heartbeat) is declared dead (0: no heartbeats)",
       .min = 0.0},
      {.name = "transfer",
       .kind = K::kEnum,
       .default_value = "ucx",
       .doc = "how cross-node object reads move the bytes",
       .allowed = {"ucx", "mpi"}},
      {.name = "ucx_wakeup",
       .kind = K::kBool,
       .default_value = "true",
       .doc = "idle ranks sleep until UCX traffic arrives"},
      // Fault tolerance
      {.name = "actor_checkpoint_dir",
       .kind = K::kString,
       .default_doc = "<session directory>/checkpoints",
       .doc = "where actor checkpoints are written (a shared file system for multi-host jobs)"},
      {.name = "job_checkpoint_dir",
       .kind = K::kString,
       .default_doc = "unset: weft::checkpoint_job and a stop need a folder passed or set",
       .doc = "where the whole-job checkpoint job.ckpt.h5 is written and read (kept across runs)"},
      {.name = "stop_signal",
       .kind = K::kEnum,
       .default_value = "usr1",
       .doc = "the signal that asks the job to checkpoint at the driver's next "
              "weft::checkpoint_point() and stop (none: the signal is left alone)",
       .allowed = {"usr1", "usr2", "term", "int", "none"}},
      {.name = "requeue_exit_code",
       .kind = K::kInt,
       .default_value = "85",
       .doc = "the exit code of a job stopped at a checkpoint (slurm/weft-requeue.sbatch requeues "
              "on it)",
       .min = 1.0,
       .max = 255.0},
      // Event loop and logging
      {.name = "steal_delay_us",
       .kind = K::kInt,
       .default_value = "200",
       .doc = "work stealing: how long before a backlog is shared or work is asked for",
       .min = 0.0},
      {.name = "loop_spin_us",
       .kind = K::kInt,
       .default_value = "50",
       .doc = "the longest an idle event loop spins before yielding (less on a shared core)",
       .min = 0.0},
      {.name = "loop_yield_us",
       .kind = K::kInt,
       .default_value = "300",
       .doc = "how long it yields before parking",
       .min = 0.0},
      {.name = "inline_tasks",
       .kind = K::kBool,
       .default_value = "true",
       .doc = "a task admitted on the loop thread runs there"},
      {.name = "log_level",
       .kind = K::kEnum,
       .default_value = "warn",
       .doc = "the least severe log lines printed",
       .allowed = {"error", "warn", "warning", "info", "debug", "trace"}},
      // Operations
      {.name = "session_dir",
       .kind = K::kString,
       .default_doc = "$TMPDIR (/tmp without TMPDIR)",
       .doc = "the folder each job makes its session directory weft-<launcher>-<job>-<pid> in"},
      {.name = "keep_session",
       .kind = K::kBool,
       .default_value = "false",
       .doc = "keep the session directory at the end, with the job's final state, timeline and "
              "logs, for weft status/list/timeline --from DIR"},
      {.name = "timeline",
       .kind = K::kBool,
       .default_value = "true",
       .doc = "record tasks, actor calls, get/put/wait, transfers, spills and restores for weft "
              "timeline"},
      {.name = "timeline_events",
       .kind = K::kInt,
       .default_value = "16384",
       .doc = "spans each thread's timeline ring keeps (the oldest are overwritten)",
       .min = 16.0,
       .max = 16777216.0},
  };
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
    case SettingKind::kInt:
      return "an integer";
    case SettingKind::kBytes:
      return "a byte size such as 4096, 64K, 1.5MiB or 2G (units: docs/operations.md)";
    case SettingKind::kBool:
      return "true or false (also 1/0, yes/no, on/off)";
    case SettingKind::kDouble:
      return "a number";
    case SettingKind::kEnum: {
      std::string out = "one of ";
      for (size_t i = 0; i < s.allowed.size(); ++i) {
        out += (i == 0                      ? ""
                : i + 1 == s.allowed.size() ? " or "
                                            : ", ") +
               std::string(s.allowed[i]);
      }
      return out;
    }
    case SettingKind::kString:
      return "a string";
  }
  return "a value";
}

}  // namespace weft
