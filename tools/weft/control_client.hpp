// One request to a job's control socket, and its reply.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "common/control_protocol.hpp"

namespace weft::cli {

// Sends `raw` (a request line, sent as is) and returns the reply's text; throws
// std::runtime_error naming the socket when it cannot connect or the job does not answer within
// `timeout`.
std::string exchange(const std::filesystem::path& socket, const std::string& raw,
                     std::chrono::milliseconds timeout);

// The command's result; throws std::runtime_error with the job's error reply.
nlohmann::json call(const std::filesystem::path& session_dir, const std::string& command,
                    std::chrono::milliseconds timeout);

}  // namespace weft::cli
