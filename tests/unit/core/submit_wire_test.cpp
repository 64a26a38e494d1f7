// A task's header (submit_wire.hpp): every field read back as written, and a malformed header (an
// unknown policy, lengths past the end, any truncation) a SerializationError, never a task.
#include "core/submit_wire.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace weft::core {
namespace {

ExecItem full_item() {
  ExecItem t;
  t.ret = ObjectId{3, 0, 77};
  t.fn_id = 0x1234567890abcdefull;
  t.depth = 4;
  t.need = sched::ResourceSet{{"CPU", 1}, {"GPU", 0.25}, {"custom_resource_name", 2}};
  t.rare.mut().placement.pg = 9;
  t.rare.mut().placement.bundle = 2;
  t.rare.mut().placement.capture = true;
  t.strategy = Strategy{sched::Policy::kNodeAffinity, 5, true};
  t.rare.mut().name = "a task name longer than the short-string buffer";
  return t;
}

serde::Buffer header_of(const ExecItem& t) {
  serde::Buffer b;
  WireWriter w(b);
  put_submit_header(w, t);
  return b;
}

TEST(SubmitWire, EveryFieldIsReadBackAsWritten) {
  const ExecItem t = full_item();
  const serde::Buffer b = header_of(t);
  WireReader r(b.data(), b.size());
  const ExecItem back = get_submit_header(r);
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(back.kind, ExecItem::Kind::kTask);
  EXPECT_EQ(back.ret, t.ret);
  EXPECT_EQ(back.owner, 3);
  EXPECT_EQ(back.fn_id, t.fn_id);
  EXPECT_EQ(back.depth, 4u);
  EXPECT_EQ(back.need, t.need);
  EXPECT_EQ(back.rare->placement.pg, 9u);
  EXPECT_EQ(back.rare->placement.bundle, 2);
  EXPECT_TRUE(back.rare->placement.capture);
  EXPECT_EQ(back.strategy.policy, sched::Policy::kNodeAffinity);
  EXPECT_EQ(back.strategy.node, 5);
  EXPECT_TRUE(back.strategy.soft);
  EXPECT_EQ(back.rare->name, t.rare->name);
}

TEST(SubmitWire, AnEmptyItemHasNoResourcesAndNoName) {
  const serde::Buffer b = header_of(ExecItem{});
  WireReader r(b.data(), b.size());
  const ExecItem back = get_submit_header(r);
  EXPECT_TRUE(back.need.empty());
  EXPECT_TRUE(back.rare->name.empty());
  EXPECT_FALSE(back.rare.has_value()) << "a plain task carries nothing out of line";
  EXPECT_EQ(back.rare->placement.pg, 0u);
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(SubmitWire, EachHeaderReadsItsOwnDemandWhateverCameBefore) {
  // The writer keeps the last demand it encoded and the reader the last it decoded: an equal
  // demand reuses them, and another one (the same length in bytes but other amounts or names,
  // or none at all) must not.
  const std::vector<sched::ResourceSet> needs = {{{"CPU", 1}},
                                                 {{"CPU", 2}},
                                                 {{"GPU", 1}},
                                                 {{"CPU", 2}},
                                                 {},
                                                 {{"CPU", 1}, {"here", 1}},
                                                 {{"CPU", 1}, {"there", 1}},
                                                 {{"CPU", 1}, {"there", 1}},
                                                 {},
                                                 {},
                                                 {{"CPU", 1}}};
  for (const auto& need : needs) {
    ExecItem t;
    t.need = need;
    const serde::Buffer b = header_of(t);
    const std::string bytes = need.to_bytes();
    ASSERT_GE(b.size(), sizeof(SubmitFixed) + bytes.size());  // the demand ends it (no name)
    EXPECT_EQ(std::string(b.data() + b.size() - bytes.size(), bytes.size()), bytes) << need.str();
    WireReader r(b.data(), b.size());
    EXPECT_EQ(get_submit_header(r).need, need) << need.str();
  }
}

TEST(SubmitWire, AnUnknownPolicyIsASerializationErrorThatNamesIt) {
  serde::Buffer b = header_of(full_item());
  b.data()[1 + offsetof(SubmitFixed, policy)] = 9;  // after the wire version byte
  WireReader r(b.data(), b.size());
  try {
    get_submit_header(r);
    ADD_FAILURE() << "policy 9 accepted";
  } catch (const SerializationError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown scheduling policy 9"), std::string::npos)
        << e.what();
  }
}

TEST(SubmitWire, LengthsPastTheEndAreASerializationError) {
  for (size_t field : {offsetof(SubmitFixed, need_len), offsetof(SubmitFixed, name_len)}) {
    serde::Buffer b = header_of(full_item());
    const uint32_t huge = 0xfffffff0u;
    std::memcpy(b.data() + 1 + field, &huge, sizeof huge);
    WireReader r(b.data(), b.size());
    EXPECT_THROW(get_submit_header(r), SerializationError) << "field at " << field;
  }
}

TEST(SubmitWire, EveryTruncationIsASerializationError) {
  const serde::Buffer b = header_of(full_item());
  for (size_t n = 1; n < b.size(); ++n) {
    WireReader r(b.data(), n);
    EXPECT_THROW(get_submit_header(r), SerializationError) << n << " bytes";
  }
}

}  // namespace
}  // namespace weft::core
