// `weft metrics`: a snapshot as Prometheus text exposition format (version 0.0.4).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace weft::cli {

std::string prometheus_text(const nlohmann::json& snapshot);

}  // namespace weft::cli
