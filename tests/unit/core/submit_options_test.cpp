// The options of weft::task(f) without .options(): one object, converted once, equal to what
// TaskOptions{} converts to (submit_task knows it by its address and skips validating it and
// building its demand, so the two must never drift apart).
#include <gtest/gtest.h>

#include <weft/weft.hpp>

namespace weft::detail {
namespace {

TEST(SubmitOptions, TheDefaultsAreOneObject) {
  EXPECT_EQ(&default_submit_options(), &default_submit_options());
}

TEST(SubmitOptions, TheDefaultsAreWhatDefaultTaskOptionsConvertTo) {
  const SubmitOptions& d = default_submit_options();
  const SubmitOptions t = to_submit_options(TaskOptions{});
  EXPECT_EQ(d.num_cpus, t.num_cpus);
  EXPECT_EQ(d.num_gpus, t.num_gpus);
  EXPECT_EQ(d.memory, t.memory);
  EXPECT_EQ(d.resources, t.resources);
  EXPECT_EQ(d.max_retries, t.max_retries);
  EXPECT_EQ(d.retry_exceptions, t.retry_exceptions);
  EXPECT_EQ(d.name, t.name);
  EXPECT_EQ(d.placement_group, t.placement_group);
  EXPECT_EQ(d.bundle_index, t.bundle_index);
  EXPECT_EQ(d.capture_child_tasks, t.capture_child_tasks);
  EXPECT_EQ(d.strategy, t.strategy);
  EXPECT_EQ(d.affinity_node, t.affinity_node);
  EXPECT_EQ(d.affinity_soft, t.affinity_soft);
  EXPECT_EQ(d.num_cpus, 1);  // a task holds one CPU slot unless told otherwise (docs/api.md)
}

}  // namespace
}  // namespace weft::detail
