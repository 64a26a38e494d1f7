// MessageScratch: message buffers leased and given back, reused; nested leases get their own.
#include "core/message_scratch.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

namespace weft::core {
namespace {

TEST(MessageScratch, AGivenBackBufferServesTheNextLeaseEmptyWithItsRoom) {
  MessageScratch s;
  const char* first = nullptr;
  {
    MessageScratch::Lease l(s);
    l.buffer().reserve(256);
    l.buffer().append("hello", 5);
    first = l.buffer().data();
  }
  EXPECT_EQ(s.kept(), 1u);
  MessageScratch::Lease l(s);
  EXPECT_EQ(l.buffer().size(), 0u);  // cleared
  EXPECT_GE(l.buffer().capacity(), 256u);
  EXPECT_EQ(l.buffer().data(), first);  // the same memory, not a new allocation
  EXPECT_EQ(s.kept(), 0u);
}

TEST(MessageScratch, NestedLeasesHaveTheirOwnBuffers) {
  MessageScratch s;
  MessageScratch::Lease outer(s);
  outer.buffer().append("outer", 5);
  {
    MessageScratch::Lease inner(s);
    inner.buffer().append("inner!", 6);
    EXPECT_NE(inner.buffer().data(), outer.buffer().data());
  }
  ASSERT_EQ(outer.buffer().size(), 5u);
  EXPECT_EQ(std::memcmp(outer.buffer().data(), "outer", 5), 0);
}

TEST(MessageScratch, TakenLargeOrSurplusBuffersAreNotKept) {
  MessageScratch s;
  {
    MessageScratch::Lease l(s);
    l.buffer().append("x", 1);
    auto bytes = l.buffer().take();  // a message that waits for owners keeps its bytes
  }
  EXPECT_EQ(s.kept(), 0u);
  {
    MessageScratch::Lease l(s);
    l.buffer().reserve(MessageScratch::kMaxKeptBytes + 1);
  }
  EXPECT_EQ(s.kept(), 0u);
  {
    std::vector<std::unique_ptr<MessageScratch::Lease>> many;
    for (size_t i = 0; i < MessageScratch::kMaxKept + 3; ++i) {
      many.push_back(std::make_unique<MessageScratch::Lease>(s));
      many.back()->buffer().reserve(64);
    }
  }
  EXPECT_EQ(s.kept(), MessageScratch::kMaxKept);
}

}  // namespace
}  // namespace weft::core
