// weft: look at a running Weft job from its node (docs/operations.md, "The weft CLI").
//   weft status | list KIND [--filter k=v] [--limit N] | metrics | clean   (each takes --json)
// It finds the job through its session directory and talks to it only through the job's
// private control socket.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <map>

#include "control_client.hpp"
#include "prometheus.hpp"
#include "render.hpp"
#include "sessions.hpp"

namespace {

using nlohmann::json;
using namespace weft::cli;

struct Target {
  std::string session, job;
  int timeout_ms = 5000;
};

void add_target(CLI::App* c, Target& t) {
  c->add_option("--session", t.session,
                "the job's session directory (weft-<launcher>-<job>-<pid>)");
  c->add_option("--job", t.job, "the job's launcher id (Slurm or mpirun job id) or rank-0 PID");
  c->add_option("--timeout-ms", t.timeout_ms, "how long to wait for the job's answer")
      ->check(CLI::PositiveNumber);
}

// `command`: "snapshot" (everything), or "metrics" (without the per-object list).
json snapshot(const Target& t, SessionInfo* info, const char* command = "snapshot") {
  *info = pick_session(default_root(), t.session, t.job);
  return call(info->dir, command, std::chrono::milliseconds(t.timeout_ms));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"weft: inspect a running Weft job on this node through its control socket"};
  app.require_subcommand(1);
  Target target;
  bool as_json = false;

  auto* status = app.add_subcommand("status", "ranks, resources, tasks, and why work is pending");
  add_target(status, target);
  status->add_flag("--json", as_json, "print rank 0's snapshot as JSON");

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
  list->add_flag("--json", as_json, "print the rows as a JSON array");

  auto* metrics = app.add_subcommand("metrics", "Prometheus text exposition of the job's figures");
  add_target(metrics, target);
  metrics->add_flag("--json", as_json, "print the figures as JSON instead");

  auto* clean = app.add_subcommand("clean", "remove the session directories of dead jobs");
  bool dry_run = false;
  clean->add_flag("--dry-run", dry_run, "only say what would be removed");
  clean->add_flag("--json", as_json, "print the folders as a JSON array");

  CLI11_PARSE(app, argc, argv);
  try {
    SessionInfo info;
    if (status->parsed()) {
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
    } else if (metrics->parsed()) {
      const json j = snapshot(target, &info, "metrics");
      std::cout << (as_json ? j["metrics"].dump(2) + "\n" : prometheus_text(j));
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
