// The job's timeline (the "timeline" section rank 0 gathers: each rank's tracks of compact
// spans) as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and chrome://tracing
// open: one process per rank, one thread track per thread of it, complete ("X") events in
// microseconds from the earliest span, clocks of other hosts shifted by the offset rank 0 took.
#pragma once

#include <nlohmann/json.hpp>

namespace weft::cli {

nlohmann::json chrome_trace(const nlohmann::json& snapshot);

}  // namespace weft::cli
