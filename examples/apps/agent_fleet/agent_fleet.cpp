// Agent fleet: hundreds of stateful agent actors, each with its own scratchpad, plan tool calls;
// the tool calls run as stateless tasks anywhere in the job; each agent then observes its tool's
// result. Nothing blocks: every step is a chain plan → tool → observe of futures, so the fleet
// pipelines across all ranks (the shape of Ray's "500 coding agents" benchmark).
//
//   mpirun -n 4 ./agent_fleet [--agents 128] [--tasks 10000] [--tool-scale 1]
//                                                             (launchers/weft-run -n 4 ...)
// --tool-scale K multiplies every tool's CPU work (1: 2.5-15 µs a tool here; 50: 0.12-0.74 ms).
#include <weft/weft.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

enum Tool : int { kSearch = 0, kCompile = 1, kTest = 2 };
const char* kToolNames[] = {"search", "compile", "test"};

struct ToolCall {
  int agent = 0, step = 0, tool = 0, scale = 1;
  uint64_t seed = 0;
};
struct ToolResult {
  int agent = 0, step = 0, tool = 0, rank = -1;
  uint64_t value = 0;
  bool ok = true;
};
struct AgentSummary {
  int id = 0, steps = 0, failures = 0;
  bool in_order = true;
  uint64_t scratchpad_bytes = 0;
};

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

// A tool: some CPU work whose size depends on the tool, e.g. grepping a corpus or compiling.
ToolResult run_tool(ToolCall c) {
  int rounds = c.scale * (c.tool == kSearch ? 2000 : c.tool == kCompile ? 6000 : 1000);
  uint64_t v = c.seed;
  for (int i = 0; i < rounds; ++i) v = mix(v + i);
  return ToolResult{c.agent, c.step, c.tool, weft::rank(), v, c.tool != kTest || (v % 10) != 0};
}

class Agent {
 public:
  Agent(int id, std::string role) : id_(id), role_(std::move(role)) {}

  // Decide the next tool from what the scratchpad says so far; `scale` sizes its work.
  ToolCall plan(int step, int scale) {
    int tool = failures_ > 0 && last_tool_ == kTest ? kCompile : (id_ + step) % 3;
    return ToolCall{id_, step, tool, scale, mix(uint64_t(id_) << 32 | uint32_t(step))};
  }
  // Record a tool's result in the scratchpad.
  int observe(ToolResult r) {
    if (r.step != next_step_) in_order_ = false;
    next_step_ = r.step + 1;
    last_tool_ = r.tool;
    if (!r.ok) ++failures_;
    char line[128];
    std::snprintf(line, sizeof line, "[%s #%d] step %d: %s on rank %d -> %s (%016llx)",
                  role_.c_str(), id_, r.step, kToolNames[r.tool], r.rank,
                  r.ok ? "ok" : "FAILED", static_cast<unsigned long long>(r.value));
    scratchpad_.emplace_back(line);
    return static_cast<int>(scratchpad_.size());
  }
  AgentSummary summary() const {
    uint64_t bytes = 0;
    for (const auto& s : scratchpad_) bytes += s.size();
    return AgentSummary{id_, static_cast<int>(scratchpad_.size()), failures_, in_order_, bytes};
  }

 private:
  int id_;
  std::string role_;
  std::vector<std::string> scratchpad_;
  int next_step_ = 0, failures_ = 0, last_tool_ = -1;
  bool in_order_ = true;
};

int arg(int argc, char** argv, const char* name, int def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return def;
}

}  // namespace

WEFT_REMOTE(run_tool);
WEFT_ACTOR(Agent, int, std::string);
WEFT_REMOTE(&Agent::plan);
WEFT_REMOTE(&Agent::observe);
WEFT_REMOTE(&Agent::summary);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [&]() -> int {
    const int num_agents = arg(argc, argv, "--agents", 128);
    const int num_tasks = arg(argc, argv, "--tasks", 10000);
    const int tool_scale = arg(argc, argv, "--tool-scale", 1);
    if (tool_scale < 1) throw std::invalid_argument("--tool-scale must be at least 1");
    const char* roles[] = {"planner", "coder", "reviewer", "tester"};
    using Clock = std::chrono::steady_clock;

    auto t0 = Clock::now();
    std::vector<weft::ActorHandle<Agent>> agents;
    for (int i = 0; i < num_agents; ++i)
      agents.push_back(weft::actor<Agent>(i, std::string(roles[i % 4])).remote());
    double spawn_s = std::chrono::duration<double>(Clock::now() - t0).count();

    // Dispatch every step as a chain of futures; nothing waits until the end.
    auto t1 = Clock::now();
    std::vector<weft::ObjectRef<ToolResult>> tools;
    std::vector<weft::ObjectRef<int>> observed;
    tools.reserve(num_tasks);
    observed.reserve(num_tasks);
    for (int k = 0; k < num_tasks; ++k) {
      auto& agent = agents[k % num_agents];
      int step = k / num_agents;
      auto call = agent.task(&Agent::plan).remote(step, tool_scale);
      auto result = weft::task(run_tool).remote(call);
      tools.push_back(result);
      observed.push_back(agent.task(&Agent::observe).remote(result));
    }
    weft::get(observed);
    double run_s = std::chrono::duration<double>(Clock::now() - t1).count();

    std::map<int, int> per_rank;
    for (const auto& r : weft::get(tools)) ++per_rank[r.rank];
    std::vector<weft::ObjectRef<AgentSummary>> sums;
    for (auto& a : agents) sums.push_back(a.task(&Agent::summary).remote());
    int steps = 0, failures = 0;
    bool ordered = true;
    uint64_t pad = 0;
    for (const auto& s : weft::get(sums)) {
      steps += s.steps;
      failures += s.failures;
      ordered = ordered && s.in_order;
      pad += s.scratchpad_bytes;
    }

    std::printf("agent fleet: %d agents on %d ranks, %d tool tasks (+%d agent calls)\n",
                num_agents, weft::world_size(), num_tasks, 2 * num_tasks);
    std::printf("  spawn %.3f s; run %.3f s: %.0f tool tasks/s = %.0f tool tasks/min\n", spawn_s,
                run_s, num_tasks / run_s, 60.0 * num_tasks / run_s);
    std::printf("  tool tasks per rank:");
    for (auto [r, n] : per_rank) std::printf(" r%d=%d", r, n);
    std::printf("\n  scratchpads: %d entries, %.1f KiB, %d failed tool runs, order kept: %s\n",
                steps, pad / 1024.0, failures, ordered ? "yes" : "NO");
    bool ok = steps == num_tasks && ordered;
    std::printf("agent_fleet %s\n", ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
  });
}
