// The options of weft::task(f) without .options(): one object, converted once, equal to what
// TaskOptions{} converts to (submit_task knows it by its address and skips validating it and
// building its demand, so the two must never drift apart).
#include <gtest/gtest.h>

#include <tuple>

#include <weft/weft.hpp>

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

}  // namespace
}  // namespace weft::detail
