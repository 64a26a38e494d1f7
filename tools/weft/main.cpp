// weft: look at a running Weft job from its node (docs/operations.md, "The weft CLI").
//   weft status [--watch] | list KIND [--filter k=v] [--limit N] | metrics [--output FILE] |
//        timeline -o FILE | logs [--rank R] [--follow] | clean          (each takes --json)
// status, list, timeline and logs also read a finished job kept with --weft-keep-session
// (--from DIR).
// It finds the job through its session directory and talks to it only through the job's
// private control socket.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include <fstream>

#include "control_client.hpp"
#include "live_views.hpp"
#include "prometheus.hpp"
#include "render.hpp"
#include "sessions.hpp"
#include "trace.hpp"

namespace {

using nlohmann::json;
using namespace weft::cli;

struct Target {
  std::string session, job, from;
  int timeout_ms = 5000;
};

void add_target(CLI::App* c, Target& t) {
  c->add_option("--session", t.session,
                "the job's session directory (weft-<launcher>-<job>-<pid>)");
  c->add_option("--job", t.job, "the job's launcher id (Slurm or mpirun job id) or rank-0 PID");
  c->add_option("--timeout-ms", t.timeout_ms, "how long to wait for the job's answer")
      ->check(CLI::PositiveNumber);
}

void add_from(CLI::App* c, Target& t) {
  c->add_option("--from", t.from,
                "read a finished job's session directory, kept with --weft-keep-session");
}

// A file the job wrote into final/ at its end (Session::keep_final_state).
json read_final(const std::string& dir, const char* name) {
  const std::filesystem::path p = std::filesystem::path(dir) / "final" / name;
  std::ifstream in(p);
  if (!in)
    throw std::runtime_error(p.string() +
                             " is not there: --from takes the session directory of a job run "
                             "with --weft-keep-session (WEFT_KEEP_SESSION=1)");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(p.string() + " is not the JSON a job writes: " + e.what());
  }
}

// `command`: "snapshot" (everything), "metrics" (without the per-object list) or "timeline".
json snapshot(const Target& t, SessionInfo* info, const char* command = "snapshot") {
  if (!t.from.empty()) {
    info->dir = t.from;
    return read_final(t.from, std::string(command) == "timeline" ? "timeline.json" : "state.json");
  }
  *info = pick_session(default_root(), t.session, t.job);
  return call(info->dir, command, std::chrono::milliseconds(t.timeout_ms));
}

// For the commands that repeat: the job's state, or nullopt once it is gone.
Fetch fetcher(const Target& t, const char* command) {
  SessionInfo info = pick_session(default_root(), t.session, t.job);
  return [info, t, command]() -> std::optional<json> {
    if (!std::filesystem::exists(info.dir / weft::control::kSocketName)) return std::nullopt;
    try {
      return call(info.dir, command, std::chrono::milliseconds(t.timeout_ms));
    } catch (const std::exception&) {
      if (!std::filesystem::exists(info.dir / weft::control::kSocketName)) return std::nullopt;
      throw;
    }
  };
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"weft: inspect a running Weft job on this node through its control socket"};
  app.require_subcommand(1);
  Target target;
  bool as_json = false;

  auto* status = app.add_subcommand("status", "ranks, resources, tasks, and why work is pending");
  add_target(status, target);
  add_from(status, target);
  status->add_flag("--json", as_json, "print the job's merged state as JSON");
  bool watch = false;
  int interval_ms = 1000;
  status->add_flag("--watch", watch, "redraw the view until the job ends, with a progress bar");
  status->add_option("--interval-ms", interval_ms, "--watch: how often to redraw")
      ->check(CLI::PositiveNumber);

  auto* list = app.add_subcommand("list", "list tasks, actors, placement groups, objects or nodes");
  add_target(list, target);
  std::string kind;
  std::vector<std::string> filters;
  size_t limit = 0;
  list->add_option("kind", kind, "tasks | actors | placement-groups | objects | nodes")
      ->required()
      ->check(CLI::IsMember({"tasks", "actors", "placement-groups", "objects", "nodes"}));
  list->add_option("--filter", filters, "keep rows whose field KEY equals VALUE (KEY=VALUE)");
  list->add_option("--limit", limit, "at most this many rows (0: all)");
  add_from(list, target);
  list->add_flag("--json", as_json, "print the rows as a JSON array");

  auto* metrics = app.add_subcommand("metrics", "Prometheus text exposition of the job's figures");
  add_target(metrics, target);
  metrics->add_flag("--json", as_json, "print the figures as JSON instead");
  std::string metrics_file;
  metrics->add_option("--output", metrics_file,
                      "write the text to FILE (atomically) every --interval-ms until the job ends");
  metrics->add_option("--interval-ms", interval_ms, "--output: how often to rewrite it")
      ->check(CLI::PositiveNumber);

  auto* timeline = app.add_subcommand(
      "timeline", "the job's timeline as Chrome trace JSON (Perfetto, chrome://tracing)");
  add_target(timeline, target);
  add_from(timeline, target);
  std::string trace_file;
  timeline->add_option("-o,--output", trace_file, "the trace file to write ('-': stdout)")
      ->required();
  timeline->add_flag("--json", as_json, "print what was written as JSON (file, spans, ranks)");

  auto* logs = app.add_subcommand("logs", "the log files of the job's ranks on this host");
  add_target(logs, target);
  add_from(logs, target);
  std::optional<int> log_rank;
  bool follow = false;
  logs->add_option("--rank", log_rank, "only this rank's log");
  logs->add_flag("--follow,-f", follow, "go on printing what the logs gain until the job ends");
  logs->add_flag("--json", as_json, "print the log files found as a JSON object rank -> path");

  auto* clean = app.add_subcommand("clean", "remove the session directories of dead jobs");
  bool dry_run = false;
  clean->add_flag("--dry-run", dry_run, "only say what would be removed");
  clean->add_flag("--json", as_json, "print the folders as a JSON array");

  CLI11_PARSE(app, argc, argv);
  try {
    SessionInfo info;
    if (status->parsed() && watch) {
      if (!target.from.empty()) throw std::runtime_error("--watch is for a running job, not --from");
      const SessionInfo s = pick_session(default_root(), target.session, target.job);
      return watch_status(fetcher(target, "snapshot"), s.dir.string(),
                          std::chrono::milliseconds(interval_ms));
    } else if (status->parsed()) {
      const json j = snapshot(target, &info);
      std::cout << (as_json ? j.dump(2) + "\n" : render_status(j, info.dir.string()));
    } else if (list->parsed()) {
      std::map<std::string, std::string> f;
      for (const auto& kv : filters) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
          std::cerr << "weft list: --filter takes KEY=VALUE, got '" << kv << "'\n";
          return 2;
        }
        f[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      const json rows = filter_rows(list_rows(snapshot(target, &info), kind), f, limit);
      std::cout << (as_json ? rows.dump(2) + "\n" : render_rows(rows));
    } else if (metrics->parsed() && !metrics_file.empty()) {
      return metrics_to_file(fetcher(target, "metrics"), metrics_file,
                             std::chrono::milliseconds(interval_ms));
    } else if (metrics->parsed()) {
      const json j = snapshot(target, &info, "metrics");
      std::cout << (as_json ? j["metrics"].dump(2) + "\n" : prometheus_text(j));
    } else if (timeline->parsed()) {
      const json trace = chrome_trace(snapshot(target, &info, "timeline"));
      size_t spans = 0;
      std::set<int> ranks;
      for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "X") ++spans, ranks.insert(e["pid"].get<int>());
      if (trace_file == "-") {
        std::cout << trace.dump() << "\n";
      } else {
        std::ofstream out(trace_file, std::ios::trunc);
        out << trace.dump() << "\n";
        if (!out) throw std::runtime_error("cannot write " + trace_file);
        if (as_json)
          std::cout << json{{"file", trace_file}, {"spans", spans}, {"ranks", ranks}}.dump(2)
                    << "\n";
        else
          std::cout << "wrote " << trace_file << ": " << spans << " spans of " << ranks.size()
                    << " ranks; open it in https://ui.perfetto.dev or chrome://tracing\n";
      }
    } else if (logs->parsed()) {
      const std::filesystem::path dir =
          target.from.empty() ? pick_session(default_root(), target.session, target.job).dir
                              : std::filesystem::path(target.from);
      if (as_json) {
        json found = json::object();
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(dir / "logs", ec))
          found[e.path().filename().string()] = e.path().string();
        std::cout << found.dump(2) << "\n";
        return found.empty() ? 1 : 0;
      }
      const bool live = target.from.empty();
      return print_logs(dir, log_rank, follow && live, [dir, live] {
        return live && std::filesystem::exists(dir / weft::control::kSocketName);
      });
    } else if (clean->parsed()) {
      json removed = json::array();
      for (const auto& s : scan_sessions(default_root())) {
        if (s.alive) continue;
        removed.push_back(s.dir.string());
        if (!dry_run) {
          std::error_code ec;
          std::filesystem::remove_all(s.dir, ec);
          if (ec) std::cerr << "weft clean: " << s.dir.string() << ": " << ec.message() << "\n";
        }
      }
      if (as_json) {
        std::cout << removed.dump(2) << "\n";
      } else {
        for (const auto& d : removed)
          std::cout << (dry_run ? "would remove " : "removed ") << d.get<std::string>() << "\n";
        if (removed.empty()) std::cout << "no session directories of dead jobs\n";
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "weft: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
