// Same-node link pieces in one process: the SPSC ring, fragmentation through flush_to_ring,
// order kept in the outbox while the ring is full, and validation of corrupt frames.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "net/frame.hpp"
#include "net/outbox.hpp"
#include "net/reassembly.hpp"
#include "net/shm_link.hpp"
#include "net/shm_ring.hpp"

namespace weft::net::detail {
namespace {

// A ring slot in ordinary memory: the layout code does not care whether it is shared.
struct TestRing {
  explicit TestRing(size_t cap)
      : cap(cap), mem(static_cast<char*>(std::aligned_alloc(64, ring_slot_bytes(cap)))) {
    std::memset(mem, 0, ring_slot_bytes(cap));
    ctl = reinterpret_cast<RingControl*>(mem);
    w = RingWriter(ctl, cap);
    r = RingReader(ctl, cap);
  }
  ~TestRing() { std::free(mem); }
  size_t cap;
  char* mem;
  RingControl* ctl;
  RingWriter w;
  RingReader r;
};

// Drains what is visible: how many frames the reader handed over, and its complaint if any.
struct Drained {
  int delivered = 0;
  std::string error;
};
Drained drain_counting(TestRing& t) {
  Drained d;
  t.r.drain(
      10, [&](const FrameHeader&, const char*) { ++d.delivered; },
      [&](const std::string& why) { d.error = why; });
  return d;
}

std::vector<char> pattern(size_t n, uint32_t seed) {
  std::vector<char> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& c : v) x = x * 1664525u + 1013904223u, c = static_cast<char>(x >> 24);
  return v;
}

struct Received {
  uint16_t type;
  std::vector<char> data;
};

size_t drain_all(TestRing& t, Reassembler& re, std::vector<Received>* got) {
  return drain_ring(7, t.r, re, 1 << 20, [&](uint16_t type, const char* d, size_t n) {
    got->push_back({type, std::vector<char>(d, d + n)});
  });
}

TEST(ShmRing, FramesSurviveManyWrapArounds) {
  TestRing t(4096);
  uint64_t written = 0, read = 0;
  for (int round = 0; round < 2000; ++round) {
    // Sizes chosen so frame boundaries land everywhere relative to the ring's end.
    const size_t len = (round * 37) % 700;
    auto v = pattern(len, round);
    ASSERT_TRUE(t.w.try_write(static_cast<uint16_t>(round % 100), kFlagFirst | kFlagLast,
                              static_cast<uint32_t>(len), v.data(), len));
    ++written;
    ASSERT_TRUE(t.w.publish());
    size_t n = t.r.drain(
        100,
        [&](const FrameHeader& h, const char* p) {
          EXPECT_EQ(h.type, round % 100);
          ASSERT_EQ(h.len, len);
          if (len) {  // v.data() may be null when len is 0, which memcmp must not get
            EXPECT_EQ(0, std::memcmp(p, v.data(), len));
          }
        },
        [](const std::string& why) { FAIL() << why; });
    read += n;
  }
  EXPECT_EQ(written, read);
  EXPECT_GT(t.ctl->tail.load(), 100u * 4096) << "the test must wrap many times";
}

TEST(ShmRing, FullRingRefusesWithoutWriting) {
  TestRing t(4096);
  std::vector<char> v(512);
  int n = 0;
  while (t.w.try_write(1, kFlagFirst | kFlagLast, 512, v.data(), v.size())) ++n;
  EXPECT_EQ(n, 7);  // 7 * 528 = 3696 <= 4096 < 8 * 528
  EXPECT_FALSE(t.r.has_data()) << "nothing is visible before publish";
  t.w.publish();
  EXPECT_TRUE(t.r.has_data());
}

TEST(ShmLink, LargeMessageIsFragmentedAndReassembled) {
  TestRing t(4096);
  Outbox out;
  auto big = pattern(300000, 42);
  out.push(5, big.data(), 1000, big.data() + 1000, big.size() - 1000);  // gather form
  Reassembler re;
  std::vector<Received> got;
  int rounds = 0;
  while (!out.empty() || t.r.has_data()) {
    bool pub = false;
    flush_to_ring(t.w, out, &pub);
    drain_all(t, re, &got);
    ASSERT_LT(++rounds, 10000);
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type, 5);
  EXPECT_EQ(got[0].data, big);
  EXPECT_GE(rounds, 300000 / 4096) << "a 300 KB message cannot pass a 4 KiB ring in one go";
}

TEST(ShmLink, FullRingKeepsOrderInOutbox) {
  TestRing t(4096);
  Outbox out;
  const int kMessages = 3000;
  for (int i = 0; i < kMessages; ++i) {
    auto v = pattern(static_cast<size_t>(i % 50) * 37, i);  // sizes 0 .. 1813, some fragmented
    uint32_t seq = i;
    out.push(static_cast<uint16_t>(i % 7), &seq, sizeof seq, v.data(), v.size());
  }
  bool pub = false;
  const size_t first = flush_to_ring(t.w, out, &pub);
  EXPECT_TRUE(pub);
  EXPECT_LT(first, static_cast<size_t>(kMessages)) << "the ring must fill up";
  EXPECT_FALSE(out.empty());
  // A second flush with no reader progress writes nothing and keeps everything queued.
  const size_t queued = out.size();
  EXPECT_EQ(flush_to_ring(t.w, out, &pub), 0u);
  EXPECT_EQ(out.size(), queued);

  Reassembler re;
  std::vector<Received> got;
  while (!out.empty() || t.r.has_data()) {
    drain_all(t, re, &got);
    flush_to_ring(t.w, out, &pub);
  }
  ASSERT_EQ(got.size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) {
    uint32_t seq;
    std::memcpy(&seq, got[i].data.data(), sizeof seq);
    ASSERT_EQ(seq, static_cast<uint32_t>(i));
    EXPECT_EQ(got[i].type, i % 7);
    auto v = pattern(static_cast<size_t>(i % 50) * 37, i);
    ASSERT_EQ(got[i].data.size(), sizeof seq + v.size());
    if (!v.empty()) {  // an empty vector's data() may be null, which memcmp must not get
      EXPECT_EQ(0, std::memcmp(got[i].data.data() + sizeof seq, v.data(), v.size()));
    }
  }
}

TEST(ShmLink, ZeroByteMessage) {
  TestRing t(4096);
  Outbox out;
  out.push(3, nullptr, 0, nullptr, 0);
  bool pub = false;
  EXPECT_EQ(flush_to_ring(t.w, out, &pub), 1u);
  Reassembler re;
  std::vector<Received> got;
  EXPECT_EQ(drain_all(t, re, &got), 1u);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].type, 3);
  EXPECT_TRUE(got[0].data.empty());
}

TEST(ShmRing, CorruptHeaderIsDroppedNotDelivered) {
  TestRing t(4096);
  std::vector<char> v(64, 'x');
  ASSERT_TRUE(t.w.try_write(1, kFlagFirst | kFlagLast, 64, v.data(), 64));
  t.w.publish();
  // Claim a payload far beyond the ring: the reader must not read past its end.
  FrameHeader h;
  std::memcpy(&h, t.mem + sizeof(RingControl), sizeof h);
  h.len = 1u << 30;
  std::memcpy(t.mem + sizeof(RingControl), &h, sizeof h);
  Drained d = drain_counting(t);
  EXPECT_EQ(d.delivered, 0);
  EXPECT_NE(d.error.find("overruns"), std::string::npos) << d.error;
  EXPECT_FALSE(t.r.has_data()) << "the bad bytes are consumed, not retried";

  // A bad version is refused too, and the ring keeps working afterwards.
  ASSERT_TRUE(t.w.try_write(1, kFlagFirst | kFlagLast, 64, v.data(), 64));
  t.w.publish();
  char* at = t.mem + sizeof(RingControl) + frame_bytes(64);
  std::memcpy(&h, at, sizeof h);
  h.version = 99;
  std::memcpy(at, &h, sizeof h);
  d = drain_counting(t);
  EXPECT_EQ(d.delivered, 0);
  EXPECT_NE(d.error.find("version"), std::string::npos) << d.error;
  ASSERT_TRUE(t.w.try_write(2, kFlagFirst | kFlagLast, 64, v.data(), 64));
  t.w.publish();
  int types = 0;
  t.r.drain(
      10, [&](const FrameHeader& fh, const char*) { types += fh.type; },
      [&](const std::string& why) { FAIL() << why; });
  EXPECT_EQ(types, 2);
}

TEST(ShmRing, PadFrameShortOfTheRingsEndIsRefused) {
  TestRing t(4096);
  // A pad frame of 32 bytes at offset 0 of a 4096-byte ring: no writer pads short of the end.
  const FrameHeader pad = make_header(0, kFlagPad, 16, 0);
  std::memcpy(t.mem + sizeof(RingControl), &pad, sizeof pad);
  t.ctl->tail.store(frame_bytes(16), std::memory_order_release);
  const Drained d = drain_counting(t);
  EXPECT_EQ(d.delivered, 0);
  EXPECT_NE(d.error.find("does not reach the ring's end"), std::string::npos) << d.error;
  EXPECT_FALSE(t.r.has_data());
}

TEST(Frame, ValidateNamesTheProblem) {
  FrameHeader h = make_header(kFirstReservedType, kFlagFirst | kFlagLast, 0, 0);
  EXPECT_NE(validate(h, 64).find("reserved"), std::string::npos);
  h = make_header(1, 0x80, 0, 0);
  EXPECT_NE(validate(h, 64).find("flags"), std::string::npos);
  h = make_header(1, kFlagFirst | kFlagLast, 0, 0);
  h.magic = 0;
  EXPECT_NE(validate(h, 64).find("magic"), std::string::npos);
  // Pad beside a message flag would be delivered as a message of a reserved type (the fuzzer's
  // corpus/wire_frames/crash-pad_flag_with_message_flags).
  h = make_header(0xFF09, kFlagPad | kFlagFirst | kFlagLast, 0, 0);
  EXPECT_NE(validate(h, 64).find("pad flag"), std::string::npos);
  EXPECT_TRUE(validate(make_header(0, kFlagPad, 48, 0), 64).empty());
  EXPECT_TRUE(validate(make_header(1, kFlagFirst | kFlagLast, 48, 48), 64).empty());
  EXPECT_FALSE(validate(make_header(1, kFlagFirst | kFlagLast, 49, 49), 64).empty());
}

TEST(Reassembler, InconsistentFragmentsAreDropped) {
  Reassembler re;
  int delivered = 0;
  auto deliver = [&](uint16_t, const char*, size_t) { ++delivered; };
  char buf[32] = {};
  // A middle fragment with no first.
  EXPECT_FALSE(re.feed(1, make_header(1, 0, 16, 0), buf, deliver));
  // A first fragment announcing 20 bytes followed by a last one overshooting it.
  EXPECT_TRUE(re.feed(1, make_header(1, kFlagFirst, 16, 20), buf, deliver));
  EXPECT_FALSE(re.feed(1, make_header(1, kFlagLast, 16, 0), buf, deliver));
  EXPECT_FALSE(re.in_progress());
  // Then a clean pair completes.
  EXPECT_TRUE(re.feed(1, make_header(1, kFlagFirst, 16, 32), buf, deliver));
  EXPECT_TRUE(re.feed(1, make_header(1, kFlagLast, 16, 0), buf, deliver));
  EXPECT_EQ(delivered, 1);
}

// A coalesced UCX batch: one writer (append_batched), one reader (for_each_batched).
TEST(FrameBatch, WhatIsAppendedIsReadBackInOrder) {
  std::vector<char> batch;
  const std::string a = "first", c(100, 'c');
  append_batched(batch, 3, a.data(), static_cast<uint32_t>(a.size()));
  append_batched(batch, 4, nullptr, 0);
  append_batched(batch, kBulkMessageType, c.data(), static_cast<uint32_t>(c.size()));
  std::vector<std::pair<uint16_t, std::string>> got;
  EXPECT_EQ(for_each_batched(batch.data(), batch.size(),
                             [&](uint16_t type, const char* p, size_t n) {
                               got.emplace_back(type, std::string(p, n));
                             }),
            "");
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], std::make_pair(uint16_t{3}, a));
  EXPECT_EQ(got[1], std::make_pair(uint16_t{4}, std::string()));
  EXPECT_EQ(got[2], std::make_pair(kBulkMessageType, c));
}

TEST(FrameBatch, ABadFrameStopsTheBatchAndSaysWhy) {
  std::vector<char> batch;
  append_batched(batch, 3, "abc", 3);
  const size_t second = batch.size();
  append_batched(batch, 5, "defg", 4);
  int delivered = 0;
  auto count = [&](uint16_t, const char*, size_t) { ++delivered; };
  // Cut inside the second frame's header, then inside its payload.
  EXPECT_NE(for_each_batched(batch.data(), second + 8, count).find("truncated"), std::string::npos);
  EXPECT_NE(for_each_batched(batch.data(), batch.size() - 1, count).find("overruns"),
            std::string::npos);
  // A fragment, and a whole message whose total disagrees with its length.
  FrameHeader h = make_header(5, kFlagFirst, 4, 8);
  std::memcpy(batch.data() + second, &h, sizeof h);
  EXPECT_NE(for_each_batched(batch.data(), batch.size(), count).find("fragment"),
            std::string::npos);
  h = make_header(5, kFlagFirst | kFlagLast, 4, 9);
  std::memcpy(batch.data() + second, &h, sizeof h);
  EXPECT_NE(for_each_batched(batch.data(), batch.size(), count).find("total"), std::string::npos);
  EXPECT_EQ(delivered, 4);  // the first message of each of the four batches, nothing after
}

}  // namespace
}  // namespace weft::net::detail
