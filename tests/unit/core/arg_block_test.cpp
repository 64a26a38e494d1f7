// The argument block: one writer, one reader, and the body's decoding of inline, stored (pinned)
// and viewed arguments, without a running runtime.
#include <gtest/gtest.h>

#include <numeric>
#include <weft/weft.hpp>

namespace {
double sum_vec(std::vector<double> v) { return std::accumulate(v.begin(), v.end(), 0.0); }
const double* g_seen = nullptr;  // where a View parameter's elements were
double sum_view(weft::View<double> v) {
  g_seen = v.data();
  return std::accumulate(v.begin(), v.end(), 0.0);
}
bool g_span_aligned = false;
int64_t sum_span(std::span<const int> s, int bias) {
  g_span_aligned = reinterpret_cast<uintptr_t>(s.data()) % alignof(int) == 0;
  return std::accumulate(s.begin(), s.end(), int64_t{0}) + bias;
}
}  // namespace
WEFT_REMOTE(sum_vec);
WEFT_REMOTE(sum_view);
WEFT_REMOTE(sum_span);

namespace weft::detail {
namespace {

std::shared_ptr<const Payload> encoded(const std::vector<double>& v) {
  serde::Buffer b;
  serde::encode(b, v);
  return std::make_shared<InlinePayload>(b.take());
}

template <class R>
R call(uint64_t fn, const serde::Buffer& block,
       const std::vector<std::shared_ptr<const Payload>>& pins = {}) {
  serde::Buffer out;
  find_function(fn)->invoke(nullptr, CallArgs{block.data(), block.size(), pins.data(), pins.size()},
                            out);
  return serde::from_bytes<R>(out.data(), out.size());
}

TEST(ArgBlock, WriterAndReaderAgreeOnEveryEntry) {
  serde::Buffer b;
  ArgWriter w(b);
  w.inline_value("abc", 3);
  w.ref();
  const StoredArg s{ObjectId{3, 0, 77}, 2, 1u << 20};
  w.stored(s);
  const size_t at = w.begin_inline();
  b.append("xy", 2);
  w.end_inline(at);

  ArgReader r(b.data(), b.size());
  ArgEntry e = r.next();
  EXPECT_EQ(e.tag, ArgTag::kInline);
  EXPECT_EQ(std::string(e.data, e.size), "abc");
  EXPECT_EQ(r.next().tag, ArgTag::kRef);
  e = r.next();
  EXPECT_EQ(e.tag, ArgTag::kStored);
  EXPECT_EQ(e.stored.id, s.id);
  EXPECT_EQ(e.stored.holder, 2);
  EXPECT_EQ(e.stored.size, 1u << 20);
  e = r.next();
  EXPECT_EQ(std::string(e.data, e.size), "xy");
  EXPECT_TRUE(r.done());
}

TEST(ArgBlock, UnknownTagAndShortEntriesAreSerializationErrors) {
  const char unknown[] = {9};
  ArgReader r(unknown, 1);
  try {
    r.next();
    FAIL();
  } catch (const SerializationError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown entry tag 9"), std::string::npos) << e.what();
  }
  serde::Buffer b;
  ArgWriter(b).stored(StoredArg{ObjectId{1, 0, 1}, 0, 8});
  ArgReader shorter(b.data(), b.size() - 1);
  EXPECT_THROW(shorter.next(), SerializationError);
  serde::Buffer c;
  ArgWriter(c).inline_value("abcd", 4);
  ArgReader lying(c.data(), c.size() - 2);  // the length says 4, two bytes are there
  EXPECT_THROW(lying.next(), SerializationError);
}

TEST(ArgBlock, StoredArgumentsAreDecodedFromTheirPins) {
  serde::Buffer block;
  ArgWriter(block).stored(StoredArg{ObjectId{0, 0, 5}, 0, 0});
  EXPECT_DOUBLE_EQ(call<double>(function_id_of(&sum_vec), block, {encoded({1, 2, 3.5})}), 6.5);
}

TEST(ArgBlock, AViewParameterPointsIntoThePinnedValue) {
  serde::Buffer block;
  ArgWriter(block).stored(StoredArg{ObjectId{0, 0, 6}, 0, 0});
  auto pin = encoded({1.5, 2.5, 4});
  EXPECT_DOUBLE_EQ(call<double>(function_id_of(&sum_view), block, {pin}), 8.0);
  EXPECT_EQ(reinterpret_cast<const char*>(g_seen), pin->data() + sizeof(uint64_t));  // no copy
}

TEST(ArgBlock, ASpanParameterTakesAnInlineSequence) {
  auto args = encode_args<std::tuple<std::span<const int>, int>>(std::vector<int>{1, 2, 3}, 10);
  EXPECT_EQ(call<int64_t>(function_id_of(&sum_span), args.bytes), 16);
  // Inside the block the elements start 17 bytes in: the span must not point there misaligned.
  EXPECT_TRUE(g_span_aligned);
}

TEST(ArgBlock, UnopenedStoredAndUnresolvedRefArgumentsNameTheArgument) {
  serde::Buffer stored;
  ArgWriter(stored).stored(StoredArg{ObjectId{0, 0, 7}, 0, 0});
  try {
    call<double>(function_id_of(&sum_vec), stored);  // no pin given
    FAIL();
  } catch (const SerializationError& e) {
    EXPECT_NE(std::string(e.what()).find("argument 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not opened"), std::string::npos) << e.what();
  }
  serde::Buffer ref;
  ArgWriter(ref).ref();
  try {
    call<double>(function_id_of(&sum_vec), ref);
    FAIL();
  } catch (const SerializationError& e) {
    EXPECT_NE(std::string(e.what()).find("unresolved ref"), std::string::npos) << e.what();
  }
}

TEST(ArgBlock, AViewOfTheWrongElementSizeIsAClearError) {
  serde::Buffer block;
  ArgWriter(block).stored(StoredArg{ObjectId{0, 0, 8}, 0, 0});
  auto odd = std::make_shared<InlinePayload>(std::vector<char>(8 + 12));  // count 0, 12 bytes
  try {
    call<double>(function_id_of(&sum_view), block, {odd});
    FAIL();
  } catch (const SerializationError& e) {
    EXPECT_NE(std::string(e.what()).find("argument 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("8-byte elements"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace weft::detail
