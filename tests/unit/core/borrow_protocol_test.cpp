// The borrower protocol without MPI: three ranks' BorrowProtocols, their messages delivered by
// hand. A message carrying another owner's ref waits for that owner's ack; owners count the
// receiver named in the batch; releases come back batched per owner; failures release what
// waits on the failed rank and drop what it borrowed.
#include "core/borrow_protocol.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace weft::core {
namespace {

struct Rank {
  explicit Rank(int r, int size = 3) : failed(size), proto(r, objects, failed) {}
  ObjectTable objects;
  FailedRanks failed;
  BorrowProtocol proto;
  MsgOutbox out;
};

StatePtr owned(Rank& r, int owner, uint64_t seq) {
  auto s = std::make_shared<detail::ObjectState>(ObjectId{owner, 0, seq});
  r.objects.insert(s);
  return s;
}

std::vector<char> body(const std::string& text) { return {text.begin(), text.end()}; }

// Delivers `m`, sent by `from`, to its destination's protocol; returns the type delivered.
void deliver(std::vector<Rank*>& ranks, int from, const OutMsg& m) {
  Rank& to = *ranks.at(m.dest);
  switch (m.type) {
    case Msg::kBorrowAdd:
      return to.proto.on_add(from, m.body.data(), m.body.size(), to.out);
    case Msg::kBorrowAck:
      return to.proto.on_ack(m.body.data(), m.body.size(), to.out);
    case Msg::kBorrowRelease:
      return to.proto.on_release(from, m.body.data(), m.body.size());
    default:
      FAIL() << "not a refcount message";
  }
}

TEST(BorrowProtocol, AMessageWithOnlyItsOwnRefsLeavesAtOnceAndTheReceiverIsCounted) {
  Rank r0(0);
  StatePtr s = owned(r0, 0, 1);
  r0.proto.send(1, Msg::kSubmitTask, body("task"), {s}, r0.out);
  ASSERT_EQ(r0.out.size(), 1u);
  EXPECT_EQ(r0.out[0].dest, 1);
  EXPECT_EQ(r0.out[0].type, Msg::kSubmitTask);
  EXPECT_EQ(std::string(r0.out[0].body.begin(), r0.out[0].body.end()), "task");
  EXPECT_EQ(r0.proto.borrows().total(), 1u);
  EXPECT_EQ(r0.proto.held(), 0u);
}

TEST(BorrowProtocol, AnotherOwnersRefHoldsTheMessageUntilThatOwnerCountedTheReceiver) {
  Rank r0(0), r1(1), r2(2);
  std::vector<Rank*> ranks{&r0, &r1, &r2};
  StatePtr at_owner = owned(r0, 0, 7);
  StatePtr borrowed = r1.proto.accept({ObjectId{0, 0, 7}}).at(0);  // rank 1 borrows it
  r1.proto.send(2, Msg::kActorCall, body("call"), {borrowed}, r1.out);
  EXPECT_TRUE(r1.out.empty()) << "left before its owner counted rank 2";
  EXPECT_EQ(r1.proto.held(), 1u);

  r1.proto.flush(r1.out);  // the turn's kBorrowAdd: one to owner 0, naming receiver 2
  ASSERT_EQ(r1.out.size(), 1u);
  EXPECT_EQ(r1.out[0].type, Msg::kBorrowAdd);
  EXPECT_EQ(r1.out[0].dest, 0);
  deliver(ranks, 1, r1.out[0]);
  r1.out.clear();
  EXPECT_EQ(r0.proto.borrows().total(), 1u);  // counted for rank 2, before the message exists
  ASSERT_EQ(r0.out.size(), 1u);
  EXPECT_EQ(r0.out[0].type, Msg::kBorrowAck);
  deliver(ranks, 0, r0.out[0]);
  ASSERT_EQ(r1.out.size(), 1u);
  EXPECT_EQ(r1.out[0].dest, 2);
  EXPECT_EQ(r1.out[0].type, Msg::kActorCall);
  EXPECT_EQ(r1.proto.held(), 0u);
}

TEST(BorrowProtocol, OneAddPerOwnerAndReceiverCarriesEveryMessageOfTheTurn) {
  Rank r1(1, 4);
  StatePtr a = r1.proto.accept({ObjectId{0, 0, 1}}).at(0);
  StatePtr b = r1.proto.accept({ObjectId{3, 0, 1}}).at(0);
  r1.proto.send(2, Msg::kSubmitTask, body("x"), {a}, r1.out);
  r1.proto.send(2, Msg::kSubmitTask, body("y"), {a, b}, r1.out);
  r1.proto.flush(r1.out);
  ASSERT_EQ(r1.out.size(), 2u);  // (owner 0, receiver 2) and (owner 3, receiver 2)
  EXPECT_EQ(r1.proto.held(), 2u);
  // Owner 0 acks first: "x" may go, "y" still waits for owner 3.
  const OutMsg& to0 = r1.out[0].dest == 0 ? r1.out[0] : r1.out[1];
  const OutMsg& to3 = r1.out[0].dest == 0 ? r1.out[1] : r1.out[0];
  Rank r0(0, 4), r3(3, 4);
  StatePtr keep0 = owned(r0, 0, 1);
  StatePtr keep3 = owned(r3, 3, 1);
  MsgOutbox acks0, acks3;
  r0.proto.on_add(1, to0.body.data(), to0.body.size(), acks0);
  r3.proto.on_add(1, to3.body.data(), to3.body.size(), acks3);
  MsgOutbox sent;
  r1.proto.on_ack(acks0[0].body.data(), acks0[0].body.size(), sent);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(std::string(sent[0].body.begin(), sent[0].body.end()), "x");
  sent.clear();
  r1.proto.on_ack(acks3[0].body.data(), acks3[0].body.size(), sent);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(std::string(sent[0].body.begin(), sent[0].body.end()), "y");
  EXPECT_EQ(r0.proto.borrows().total(), 2u);  // rank 2 holds a credit per message
  EXPECT_EQ(r3.proto.borrows().total(), 1u);
}

TEST(BorrowProtocol, ReleasesGoBackBatchedPerOwnerAndUnpinTheOwnersState) {
  Rank r0(0), r1(1), r2(2);
  std::vector<Rank*> ranks{&r0, &r1, &r2};
  StatePtr s = owned(r0, 0, 5);
  std::weak_ptr<detail::ObjectState> w = s;
  r0.proto.send(1, Msg::kSubmitTask, body("a"), {s}, r0.out);
  r0.proto.send(1, Msg::kSubmitTask, body("b"), {s}, r0.out);
  s.reset();
  EXPECT_FALSE(w.expired()) << "the borrow table must pin the state while rank 1 holds credits";
  EXPECT_TRUE(r1.proto.queue_release(ObjectId{0, 0, 5}, 1));
  EXPECT_FALSE(r1.proto.queue_release(ObjectId{0, 0, 5}, 1)) << "only the first one wakes";
  EXPECT_FALSE(r1.proto.queue_release(ObjectId{2, 0, 9}, 3));
  r1.proto.flush(r1.out);
  ASSERT_EQ(r1.out.size(), 2u);  // one kBorrowRelease per owner
  for (const OutMsg& m : r1.out) {
    EXPECT_EQ(m.type, Msg::kBorrowRelease);
    if (m.dest == 0) deliver(ranks, 1, m);
  }
  EXPECT_EQ(r0.proto.borrows().total(), 0u);
  EXPECT_TRUE(w.expired()) << "the last credit came back and no local ref is left";
}

TEST(BorrowProtocol, ARefBackAtItsOwnerReturnsTheInFlightCreditAtOnce) {
  Rank r0(0);
  StatePtr s = owned(r0, 0, 3);
  r0.proto.send(1, Msg::kSubmitTask, body("t"), {s}, r0.out);
  EXPECT_EQ(r0.proto.borrows().total(), 1u);
  // The message went on to rank 0 itself (say, rank 1's result carries the ref back): the
  // credit was taken for rank 0 as receiver.
  r0.proto.send(0, Msg::kTaskResult, body("r"), {s}, r0.out);
  std::vector<StatePtr> got = r0.proto.accept({ObjectId{0, 0, 3}});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], s);
  EXPECT_EQ(r0.proto.borrows().total(), 1u);  // rank 1's credit stays; its own came back
}

TEST(BorrowProtocol, AFailedOwnerReleasesTheMessagesWaitingForItsAck) {
  Rank r1(1);
  StatePtr b = r1.proto.accept({ObjectId{0, 0, 1}}).at(0);
  r1.proto.send(2, Msg::kSubmitTask, body("t"), {b}, r1.out);  // waits in this turn's batch
  r1.proto.send(2, Msg::kSubmitTask, body("u"), {b}, r1.out);
  r1.proto.flush(r1.out);
  r1.out.clear();  // the kBorrowAdd went to owner 0, which dies before it answers
  r1.proto.send(2, Msg::kSubmitTask, body("v"), {b}, r1.out);  // in the next turn's batch
  r1.failed.add(0);
  r1.proto.peer_failed(0, r1.out);
  ASSERT_EQ(r1.out.size(), 3u);  // all three go: the receiver learns of the owner's death
  EXPECT_EQ(r1.proto.held(), 0u);
  // Refs of a failed owner hold nothing back any more.
  r1.out.clear();
  r1.proto.send(2, Msg::kSubmitTask, body("w"), {b}, r1.out);
  EXPECT_EQ(r1.out.size(), 1u);
}

TEST(BorrowProtocol, AFailedBorrowersCreditsGoAndAFailedReceiverIsNeverCounted) {
  Rank r0(0);
  StatePtr s = owned(r0, 0, 1);
  std::weak_ptr<detail::ObjectState> w = s;
  r0.proto.send(2, Msg::kSubmitTask, body("t"), {s}, r0.out);
  r0.proto.send(2, Msg::kSubmitTask, body("u"), {s}, r0.out);
  s.reset();
  r0.failed.add(2);
  EXPECT_EQ(r0.proto.peer_failed(2, r0.out), 2u);
  EXPECT_TRUE(w.expired());
  StatePtr t = owned(r0, 0, 2);
  r0.proto.send(2, Msg::kSubmitTask, body("v"), {t}, r0.out);  // to a failed rank: not counted
  EXPECT_EQ(r0.proto.borrows().total(), 0u);
  // Another rank's kBorrowAdd naming the failed receiver is acked but not counted.
  Rank r1(1);
  StatePtr b = r1.proto.accept({ObjectId{0, 0, 2}}).at(0);
  r1.proto.send(2, Msg::kSubmitTask, body("x"), {b}, r1.out);
  MsgOutbox adds;
  r1.proto.flush(adds);
  MsgOutbox acks;
  r0.proto.on_add(1, adds.at(0).body.data(), adds.at(0).body.size(), acks);
  EXPECT_EQ(acks.size(), 1u);
  EXPECT_EQ(r0.proto.borrows().total(), 0u);
}

TEST(BorrowProtocol, ACorruptCountIsRefusedBeforeItSizesAnything) {
  Rank r0(0);
  serde::Buffer b;
  WireWriter w(b);
  w.put<uint64_t>(1);            // batch
  w.put<int32_t>(2);             // receiver
  w.put<uint32_t>(0x7fffffffu);  // ids that are not there
  std::vector<char> bytes = b.take();
  EXPECT_THROW(r0.proto.on_add(1, bytes.data(), bytes.size(), r0.out), SerializationError);
  EXPECT_TRUE(r0.out.empty());
}

}  // namespace
}  // namespace weft::core
