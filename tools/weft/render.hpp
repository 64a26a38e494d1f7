// Text views of a job snapshot (the JSON rank 0 returns; src/core/job_state_snapshot.cpp).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace weft::cli {

std::string render_status(const nlohmann::json& snapshot, const std::string& session);

// The rows `weft list KIND` shows: a JSON array; throws std::runtime_error for an unknown kind.
nlohmann::json list_rows(const nlohmann::json& snapshot, const std::string& kind);
// Rows whose every `key` holds `value` (numbers and booleans compared as written), then at most
// `limit` of them (0: all).
nlohmann::json filter_rows(const nlohmann::json& rows, const std::map<std::string, std::string>& f,
                           size_t limit);
std::string render_rows(const nlohmann::json& rows);

}  // namespace weft::cli
