#include "live_views.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "prometheus.hpp"
#include "render.hpp"

namespace weft::cli {
namespace fs = std::filesystem;
using nlohmann::json;

std::string progress_line(const json& j, int width) {
  const json t = j.value("tasks", json::object());
  const uint64_t submitted = t.value("submitted", uint64_t{0});
  const uint64_t finished = t.value("finished", uint64_t{0}) + t.value("failed", uint64_t{0});
  const double frac = submitted ? std::min(1.0, static_cast<double>(finished) / submitted) : 0.0;
  const int full = static_cast<int>(frac * width + 0.5);
  std::string bar = "[" + std::string(full, '#') + std::string(width - full, '.') + "] ";
  char tail[128];
  std::snprintf(tail, sizeof tail, "%llu/%llu tasks finished (%.0f %%)",
                static_cast<unsigned long long>(finished),
                static_cast<unsigned long long>(submitted), frac * 100.0);
  return bar + tail;
}

int watch_status(const Fetch& fetch, const std::string& session, std::chrono::milliseconds every) {
  const bool tty = ::isatty(1) != 0;
  for (;;) {
    std::optional<json> j = fetch();
    if (!j) {
      std::cout << "\nthe job ended (its control socket is gone)\n";
      return 0;
    }
    // On a terminal the view is redrawn in place; into a file or pipe each refresh follows the
    // last, separated by a blank line.
    std::cout << (tty ? "\x1b[H\x1b[2J" : "\n") << progress_line(*j) << "\n\n"
              << render_status(*j, session) << std::flush;
    std::this_thread::sleep_for(every);
  }
}

int metrics_to_file(const Fetch& fetch, const fs::path& file, std::chrono::milliseconds every) {
  for (size_t writes = 0;; ++writes) {
    std::optional<json> j = fetch();
    if (!j) {
      std::cerr << "weft metrics: the job ended; " << file.string() << " keeps its last figures ("
                << writes << " writes)\n";
      return 0;
    }
    // Whole or not at all for a scraper: a temporary beside it, then a rename.
    const fs::path tmp = file.string() + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << prometheus_text(*j);
      if (!out) throw std::runtime_error("cannot write " + tmp.string());
    }
    fs::rename(tmp, file);
    std::this_thread::sleep_for(every);
  }
}

int print_logs(const fs::path& dir, std::optional<int> rank, bool follow,
               const std::function<bool()>& alive) {
  const fs::path logs = dir / "logs";
  auto files = [&] {
    std::map<int, fs::path> out;  // by rank
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(logs, ec)) {
      const std::string n = e.path().filename().string();
      int r = -1;
      if (std::sscanf(n.c_str(), "rank-%d.log", &r) == 1 && r >= 0 && (!rank || *rank == r))
        out[r] = e.path();
    }
    return out;
  };
  std::map<int, fs::path> found = files();
  if (found.empty() && !follow) {
    std::cerr << "weft logs: no log file" << (rank ? " of rank " + std::to_string(*rank) : "")
              << " in " << logs.string()
              << (rank ? " (a rank on another host keeps its log in that host's session "
                         "directory)"
                       : "")
              << "\n";
    return 1;
  }
  std::map<int, std::streamoff> read;  // bytes printed per rank
  auto print_new = [&](bool headers) {
    for (const auto& [r, path] : files()) {
      std::ifstream in(path, std::ios::binary);
      in.seekg(0, std::ios::end);
      const std::streamoff size = in.tellg();
      std::streamoff& at = read[r];
      if (size <= at) continue;
      in.seekg(at);
      std::string chunk(static_cast<size_t>(size - at), '\0');
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      // Whole lines only: the rest waits for its newline.
      const size_t end = chunk.rfind('\n');
      if (end == std::string::npos) continue;
      if (headers) std::cout << "==> rank " << r << " (" << path.string() << ") <==\n";
      std::cout.write(chunk.data(), static_cast<std::streamsize>(end + 1));
      at += static_cast<std::streamoff>(end + 1);
    }
    std::cout << std::flush;
  };
  print_new(/*headers=*/!follow && !rank);
  if (!follow) return 0;
  while (alive()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    print_new(false);
  }
  print_new(false);
  return 0;
}

}  // namespace weft::cli
