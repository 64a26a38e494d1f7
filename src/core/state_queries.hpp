// Gathering the job's state from a thread other than the loop's (the control socket's, and the
// driver's at the end of a job that keeps its session): posts EventLoop::gather_state to rank
// 0's loop and waits for the merged view (state_queries.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

namespace weft::core {

class EventLoop;

// nullopt when the loop gave no answer within the gather's deadline plus `loop_wait` (one long
// turn); throws std::runtime_error with the reason when the state could not be built.
std::optional<nlohmann::json> gather_and_wait(EventLoop& loop, uint8_t want,
                                              std::chrono::milliseconds loop_wait);

}  // namespace weft::core
