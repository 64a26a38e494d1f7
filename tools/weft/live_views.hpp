// The CLI's commands that go on until the job ends: `status --watch` (a view redrawn in place
// with a progress bar), `metrics --output FILE` (the Prometheus text rewritten at an interval,
// for sites that scrape files) and `logs --follow`. Each stops with code 0 when the job is gone.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace weft::cli {

// Asks the job for its state; nullopt once the job is gone (its socket no longer answers).
using Fetch = std::function<std::optional<nlohmann::json>()>;

int watch_status(const Fetch& fetch, const std::string& session, std::chrono::milliseconds every);
int metrics_to_file(const Fetch& fetch, const std::filesystem::path& file,
                    std::chrono::milliseconds every);
// The log files of the session's ranks on this host (logs/rank-<r>.log), all or one rank's.
// `follow`: then prints what they gain until `alive()` is false. 1 when there is no log file.
int print_logs(const std::filesystem::path& session_dir, std::optional<int> rank, bool follow,
               const std::function<bool()>& alive);

// "[#########.........] 123/456 tasks finished (27 %)": every rank's tasks, `width` columns of bar.
std::string progress_line(const nlohmann::json& snapshot, int width = 30);

}  // namespace weft::cli
