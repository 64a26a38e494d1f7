// Large ref arguments read in place (docs/api.md, "Large arguments"): a value in the node store
// reaches a task's or an actor method's parameter without a copy on the way, by value (decoded
// from the segment) and as weft::View / std::span (pointing into the segment), on the holder's
// node and on every other node (pulled there once). "ObjectsArgs" also runs in the object
// variants (small store, MPI transfers).
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <numeric>
#include <weft/weft.hpp>

#include "test_pattern.hpp"

using namespace std::chrono_literals;

namespace {

constexpr uint64_t kBig = 3 << 20;  // above the 100 KiB inline threshold: in the node store

// 1 when [p, p + n) lies in this rank's mapping of its node's store segment.
uint64_t in_segment(const void* p, size_t n) {
  const auto info = weft::detail::local_store_info();
  const auto a = reinterpret_cast<uintptr_t>(p);
  return info.segment_size && a >= info.segment_base &&
         a + n <= info.segment_base + info.segment_size;
}

// {in the segment, mismatches, node}
std::vector<uint64_t> check_view(weft::View<uint8_t> v, uint32_t seed) {
  return {in_segment(v.data(), v.size()), weft_test::mismatches<uint8_t>(v.span(), seed),
          static_cast<uint64_t>(weft::node())};
}
std::vector<uint64_t> check_span(std::span<const uint8_t> v, uint32_t seed) {
  return {in_segment(v.data(), v.size()), weft_test::mismatches<uint8_t>(v, seed),
          static_cast<uint64_t>(weft::node())};
}
std::vector<uint64_t> check_value(std::vector<uint8_t> v, uint32_t seed) {
  return {v.size(), weft_test::mismatches<uint8_t>(v, seed), static_cast<uint64_t>(weft::node())};
}
int64_t sum_ints(std::span<const int> v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

// An actor that records the order its calls ran in, some with a large stored argument.
class Recorder {
 public:
  uint64_t big(int i, weft::View<uint8_t> v, uint32_t seed) {
    order_.push_back(i);
    return weft_test::mismatches<uint8_t>(v.span(), seed) +
           (in_segment(v.data(), v.size()) ? 0 : 1000);
  }
  uint64_t by_value(int i, std::vector<uint8_t> v, uint32_t seed) {
    order_.push_back(i);
    return v.size() == kBig ? weft_test::mismatches<uint8_t>(v, seed) : 1000;
  }
  uint64_t small(int i) {
    order_.push_back(i);
    return 0;
  }
  std::vector<int> order() const { return order_; }

 private:
  std::vector<int> order_;
};

weft::TaskOptions on_node(int node) {
  weft::TaskOptions o;
  o.scheduling_strategy = weft::NodeAffinity{.node = node, .soft = false};
  return o;
}

}  // namespace

WEFT_REMOTE(check_view);
WEFT_REMOTE(check_span);
WEFT_REMOTE(check_value);
WEFT_REMOTE(sum_ints);
WEFT_ACTOR(Recorder);
WEFT_REMOTE(&Recorder::big);
WEFT_REMOTE(&Recorder::by_value);
WEFT_REMOTE(&Recorder::small);
WEFT_REMOTE(&Recorder::order);

TEST(ObjectsArgs, ViewAndSpanParametersPointIntoTheStoreOnEveryNode) {
  auto ref = weft::put(weft_test::pattern<uint8_t>(kBig, 5));
  for (int node = 0; node < weft::num_nodes(); ++node) {
    auto v = weft::task(check_view).options(on_node(node)).remote(ref, 5u).get(60s);
    EXPECT_EQ(v[0], 1u) << "the View is not inside node " << node << "'s store segment";
    EXPECT_EQ(v[1], 0u) << "node " << node;
    EXPECT_EQ(v[2], static_cast<uint64_t>(node));
    auto s = weft::task(check_span).options(on_node(node)).remote(ref, 5u).get(60s);
    EXPECT_EQ(s[0], 1u) << "the span is not inside node " << node << "'s store segment";
    EXPECT_EQ(s[1], 0u) << "node " << node;
  }
}

TEST(ObjectsArgs, ByValueParametersGetEveryByteOnEveryNode) {
  auto ref = weft::put(weft_test::pattern<uint8_t>(kBig, 6));
  for (int node = 0; node < weft::num_nodes(); ++node) {
    auto v = weft::task(check_value).options(on_node(node)).remote(ref, 6u).get(60s);
    EXPECT_EQ(v[0], kBig) << "node " << node;
    EXPECT_EQ(v[1], 0u) << "node " << node;
  }
  // A task's own result, produced elsewhere, read in place by the next task.
  auto made = weft::put(weft_test::pattern<uint8_t>(kBig, 7));
  auto again = weft::task(check_view).remote(made, 7u).get(60s);
  EXPECT_EQ(again[1], 0u);
}

TEST(ObjectsArgs, SmallValuesPassedToViewParametersTravelInline) {
  EXPECT_EQ(weft::task(sum_ints).remote(std::vector<int>{1, 2, 3, 4}).get(30s), 10);
  auto small = weft::put(std::vector<int>{5, 6});
  EXPECT_EQ(weft::task(sum_ints).remote(small).get(30s), 11);
  auto tiny = weft::put(weft_test::pattern<uint8_t>(64, 8));
  auto v = weft::task(check_view).remote(tiny, 8u).get(30s);
  EXPECT_EQ(v[1], 0u);  // a view of the inline bytes
}

TEST(ObjectsArgs, ActorCallsWithStoredArgumentsKeepTheCallersOrder) {
  weft::ActorOptions o;
  if (weft::world_size() > 1) o.resources = {{"special", 1}};
  auto rec = weft::actor<Recorder>().options(o).remote();
  auto big = weft::put(weft_test::pattern<uint8_t>(kBig, 9));
  std::vector<weft::ObjectRef<uint64_t>> results;
  for (int i = 0; i < 12; ++i) {
    if (i % 3 == 0)
      results.push_back(rec.task(&Recorder::big).remote(i, big, 9u));
    else if (i % 3 == 1)
      results.push_back(rec.task(&Recorder::by_value).remote(i, big, 9u));
    else
      results.push_back(rec.task(&Recorder::small).remote(i));
  }
  for (size_t i = 0; i < results.size(); ++i) EXPECT_EQ(results[i].get(60s), 0u) << "call " << i;
  std::vector<int> want(12);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(rec.task(&Recorder::order).remote().get(30s), want);
  weft::kill(rec);
}
