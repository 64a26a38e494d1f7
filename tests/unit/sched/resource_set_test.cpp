#include "sched/resource_set.hpp"

#include <gtest/gtest.h>

#include "sched/resource_spec.hpp"
#include "weft/errors.hpp"

namespace weft::sched {
namespace {

TEST(ResourceSet, FractionalGpusAddUpExactly) {
  ResourceSet sum;
  for (int i = 0; i < 10; ++i) sum += ResourceSet{{"GPU", 0.1}};
  EXPECT_EQ(sum.units("GPU"), ResourceSet::kUnit);
  EXPECT_EQ(sum, (ResourceSet{{"GPU", 1}}));
  ResourceSet cap{{"GPU", 1}};
  for (int i = 0; i < 3; ++i) cap -= ResourceSet{{"GPU", 1.0 / 3}};
  EXPECT_EQ(cap.units("GPU"), 1);  // 1/3 rounds to 0.3333: the remainder is visible, not drift
}

TEST(ResourceSet, ZeroAmountsDisappear) {
  ResourceSet a{{"CPU", 2}, {"GPU", 1}};
  a -= ResourceSet{{"GPU", 1}};
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(a.get("GPU"), 0);
  a.set("CPU", 0);
  EXPECT_TRUE(a.empty());
}

TEST(ResourceSet, FitsInTreatsMissingCapacityAsZero) {
  ResourceSet cap{{"CPU", 4}, {"GPU", 1}};
  EXPECT_TRUE((ResourceSet{{"CPU", 4}}).fits_in(cap));
  EXPECT_TRUE((ResourceSet{{"CPU", 2}, {"GPU", 0.5}}).fits_in(cap));
  EXPECT_FALSE((ResourceSet{{"CPU", 4.0001}}).fits_in(cap));
  EXPECT_FALSE((ResourceSet{{"special", 1}}).fits_in(cap));
  EXPECT_TRUE(ResourceSet().fits_in(cap));
}

TEST(ResourceSet, StrIsSortedAndShort) {
  ResourceSet a{{"GPU", 0.5}, {"CPU", 2}, {"memory", 1.25}};
  EXPECT_EQ(a.str(), "{CPU: 2, GPU: 0.5, memory: 1.25}");
  EXPECT_EQ(ResourceSet().str(), "{}");
}

TEST(ResourceSet, BytesRoundTrip) {
  ResourceSet a{{"CPU", 64}, {"GPU", 0.25}, {"custom/x", 3}, {"memory", 1e12}};
  a.set_units("neg", -5);
  std::string bytes = a.to_bytes();
  EXPECT_EQ(ResourceSet::from_bytes(bytes), a);
  EXPECT_EQ(ResourceSet::from_bytes(ResourceSet().to_bytes()), ResourceSet());
  // Two sets back to back in one message.
  std::string two = a.to_bytes() + ResourceSet{{"GPU", 1}}.to_bytes();
  std::string_view in(two);
  EXPECT_EQ(ResourceSet::read_bytes(&in), a);
  EXPECT_EQ(ResourceSet::read_bytes(&in), (ResourceSet{{"GPU", 1}}));
  EXPECT_TRUE(in.empty());
}

TEST(ResourceSet, MalformedBytesRaiseSerializationError) {
  std::string bytes = ResourceSet{{"CPU", 2}, {"GPU", 1}}.to_bytes();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_THROW(ResourceSet::from_bytes(bytes.substr(0, cut)), SerializationError) << cut;
  }
  EXPECT_THROW(ResourceSet::from_bytes(bytes + "x"), SerializationError);
  try {
    ResourceSet::from_bytes(std::string("\x05", 1));
    FAIL();
  } catch (const SerializationError& e) {
    EXPECT_NE(std::string(e.what()).find("claim 5 entries"), std::string::npos) << e.what();
  }
}

TEST(ResourceSpec, GlobalItemsAndRankRanges) {
  const std::string spec = "CPU=2;GPU=1;1-3:special=1;2:GPU=0.5; 5 : CPU = 8 ";
  EXPECT_EQ(parse_resource_spec(spec, 0), (ResourceSet{{"CPU", 2}, {"GPU", 1}}));
  EXPECT_EQ(parse_resource_spec(spec, 1), (ResourceSet{{"CPU", 2}, {"GPU", 1}, {"special", 1}}));
  EXPECT_EQ(parse_resource_spec(spec, 2), (ResourceSet{{"CPU", 2}, {"GPU", 0.5}, {"special", 1}}));
  EXPECT_EQ(parse_resource_spec(spec, 4), (ResourceSet{{"CPU", 2}, {"GPU", 1}}));
  EXPECT_EQ(parse_resource_spec(spec, 5), (ResourceSet{{"CPU", 8}, {"GPU", 1}}));
  EXPECT_TRUE(parse_resource_spec("", 0).empty());
  EXPECT_EQ(parse_resource_spec("memory=4G;CPU=1;", 0).get("memory"), 4.0 * (1 << 30));
}

// "GPU=0" for a rank must be visible (it turns detected GPUs off) though the set drops zeros.
TEST(ResourceSpec, SetsTellANamedZeroFromAnAbsentName) {
  const std::string spec = "CPU=2;1:GPU=0;2-3:GPU=1";
  EXPECT_FALSE(resource_spec_sets(spec, 0, "GPU"));
  EXPECT_TRUE(resource_spec_sets(spec, 1, "GPU"));
  EXPECT_EQ(parse_resource_spec(spec, 1).units("GPU"), 0);
  EXPECT_TRUE(resource_spec_sets(spec, 3, "GPU"));
  EXPECT_TRUE(resource_spec_sets(spec, 0, "CPU"));
  EXPECT_FALSE(resource_spec_sets("", 0, "GPU"));
  EXPECT_THROW(resource_spec_sets("1:GPU", 0, "GPU"), ConfigError);  // still validated
}

void expect_config_error(const std::string& spec, const std::string& fragment) {
  try {
    parse_resource_spec(spec, 0);
    ADD_FAILURE() << "no error for " << spec;
  } catch (const ConfigError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(ResourceSpec, ErrorsQuoteTheOffendingItem) {
  expect_config_error("CPU=2;GPU", "'GPU': missing '='");
  expect_config_error("CPU=two", "'CPU=two': amount 'two' is not a number");
  expect_config_error("GPU=-1", "amount -1 is negative");
  expect_config_error("=3", "resource name ''");
  expect_config_error("C PU=3", "resource name 'C PU'");
  expect_config_error("3-1:GPU=1", "rank range 3-1 is empty");
  expect_config_error("x:GPU=1", "rank 'x' is not a non-negative integer");
  expect_config_error("1-:GPU=1", "rank '' is not");
  expect_config_error("GPU=", "missing amount for 'GPU'");
  expect_config_error("GPU=0.00001", "below the resolution");
  // Items for other ranks are validated too: a typo must not hide until rank 7 starts.
  expect_config_error("7:GPU=abc", "amount 'abc'");
  expect_config_error("memory=4Q", "memory");
}

}  // namespace
}  // namespace weft::sched

TEST(ResourceSet, FitsBesideIsFitsInTheRemainder) {
  using weft::sched::ResourceSet;
  ResourceSet cap{{"CPU", 2}, {"GPU", 1}};
  ResourceSet used{{"CPU", 1.5}};
  EXPECT_TRUE((ResourceSet{{"CPU", 0.5}}).fits_beside(used, cap));
  EXPECT_FALSE((ResourceSet{{"CPU", 1}}).fits_beside(used, cap));
  EXPECT_TRUE((ResourceSet{{"GPU", 1}}).fits_beside(used, cap));
  EXPECT_FALSE((ResourceSet{{"special", 1}}).fits_beside(used, cap));
  for (double c : {0.0, 0.25, 0.5, 0.75, 1.0})
    EXPECT_EQ((ResourceSet{{"CPU", c}}).fits_beside(used, cap),
              (ResourceSet{{"CPU", c}}).fits_in(cap - used));
}
