// The options of weft::task(f) without .options(): one object, converted once, equal to what
// TaskOptions{} converts to (submit_task knows it by its address and skips validating it and
// building its demand, so the two must never drift apart).
#include <gtest/gtest.h>

#include <tuple>

#include <weft/weft.hpp>

#include "core/event_loop.hpp"

namespace weft::detail {
namespace {

TEST(SubmitOptions, TheDefaultsAreOneObject) {
  EXPECT_EQ(&default_submit_options(), &default_submit_options());
}

// Every field, as one tuple (gtest prints both sides when they differ).
auto fields(const SubmitOptions& o) {
  return std::tie(o.num_cpus, o.num_gpus, o.memory, o.resources, o.max_retries,
                  o.retry_exceptions, o.name, o.placement_group, o.bundle_index,
                  o.capture_child_tasks, o.strategy, o.affinity_node, o.affinity_soft);
}

TEST(SubmitOptions, TheDefaultsAreWhatDefaultTaskOptionsConvertTo) {
  const SubmitOptions t = to_submit_options(TaskOptions{});
  EXPECT_EQ(fields(default_submit_options()), fields(t));
  EXPECT_EQ(default_submit_options().num_cpus, 1);  // one CPU slot unless told (docs/api.md)
}

TEST(SubmitOptions, EachCallsDemandIsItsOwnWhateverCameBefore) {
  // core::to_need keeps the custom resources it last converted on this thread: equal ones reuse
  // them, and other names, amounts or none at all must not.
  auto opts = [](double cpus, std::vector<std::pair<std::string, double>> res, double gpus = 0,
                 double memory = 0) {
    SubmitOptions o;
    o.num_cpus = cpus;
    o.num_gpus = gpus;
    o.memory = memory;
    o.resources = std::move(res);
    return o;
  };
  const std::vector<std::pair<SubmitOptions, sched::ResourceSet>> cases = {
      {opts(1, {}), {{"CPU", 1}}},
      {opts(0, {{"there", 1}}), {{"there", 1}}},
      {opts(1, {{"there", 1}}), {{"CPU", 1}, {"there", 1}}},
      {opts(0, {{"there", 2}}), {{"there", 2}}},
      {opts(0, {{"where", 2}}), {{"where", 2}}},
      {opts(0, {{"there", 1}, {"where", 0.5}}, 1), {{"GPU", 1}, {"there", 1}, {"where", 0.5}}},
      {opts(2, {{"there", 1}, {"where", 0.5}}, 0, 64),
       {{"CPU", 2}, {"memory", 64}, {"there", 1}, {"where", 0.5}}},
      {opts(0, {}), {}},
      {opts(0, {{"CPU", 3}}), {{"CPU", 3}}},
      {opts(1, {{"CPU", 3}}), {{"CPU", 1}}},  // num_cpus wins over a "CPU" entry
      {opts(0, {{"there", 1}}), {{"there", 1}}},
  };
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const size_t c = round ? cases.size() - 1 - i : i;
      EXPECT_EQ(core::to_need(cases[c].first), cases[c].second)
          << "case " << c << ", round " << round;
    }
  }
}

}  // namespace
}  // namespace weft::detail
