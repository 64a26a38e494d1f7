// The pull protocol without MPI: a holder's and readers' ObjectPullers over two real node stores
// (two segments in this process), messages delivered by hand and the RMA read done with memcpy
// from the holder's segment. A pull copies every byte and unpins the holder; two waiters make
// one request; a second rank of the reader's node waits for the first one's copy, and asks the
// holder itself when that copy is given up; a failed holder fails its pulls; a failed reader's
// pins go; a copy without room is held and made once spilling frees room; a spilled object is
// restored off the loop before the holder answers.
#include "core/object_puller.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/object_store_client.hpp"

namespace weft::core {
namespace {

constexpr size_t kMiB = 1 << 20;

struct TempStore {
  explicit TempStore(const std::string& tag) {
    static std::atomic<int> n{0};
    const std::string s = std::to_string(::getpid()) + "_" + tag + std::to_string(n++);
    store::StoreOptions o;
    o.name = "weft_puller_test_" + s;
    o.capacity = 16 * kMiB;
    o.spill_dir = std::filesystem::temp_directory_path() / ("weft-puller-test-" + s);
    dir = o.spill_dir;
    store = store::NodeStore::create(o);
  }
  ~TempStore() {
    store.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string dir;
  std::unique_ptr<store::NodeStore> store;
};

// Ranks 0 (node 0, the holder) and 1, 2 (node 1, the readers).
net::Topology topology(int rank) {
  net::Topology t;
  t.rank = rank;
  t.size = 3;
  t.node_of_rank = {0, 1, 1};
  t.node = t.node_of_rank[rank];
  t.num_nodes = 2;
  return t;
}

const ObjectId kId{0, 0, 42};

void put_primary(store::NodeStore& s, size_t size) {
  store::WritableObject w = s.create(kId, size, /*primary=*/true).take();
  for (size_t i = 0; i < size; ++i) w.data()[i] = std::byte(i * 7 + 1);
  w.seal();
}

struct Got {
  std::shared_ptr<const detail::Payload> payload;
  detail::ErrorInfo error;
  int calls = 0;
};

PulledFn into(Got& g) {
  return [&g](std::shared_ptr<const detail::Payload> p, detail::ErrorInfo e) {
    g.payload = std::move(p);
    g.error = std::move(e);
    ++g.calls;
  };
}

// The message of type `t` in `out`, or null.
const OutMsg* find(const ObjectPuller::Outbox& out, Msg t) {
  for (const OutMsg& m : out.msgs)
    if (m.type == t) return &m;
  return nullptr;
}

struct Cluster {
  TempStore node0{"h"}, node1{"r"};
  net::Topology t0 = topology(0), t1 = topology(1), t2 = topology(2);
  ObjectPuller holder{t0, node0.store.get()};
  ObjectPuller reader{t1, node1.store.get()};
  ObjectPuller neighbour{t2, node1.store.get()};  // rank 2: the reader's node, its store too

  // The holder answers `request` (from `rank`) and the reply reaches that rank's puller.
  ObjectPuller::Outbox answer(ObjectPuller& who, int rank, const OutMsg& request) {
    EXPECT_EQ(request.type, Msg::kPullRequest);
    EXPECT_EQ(request.dest, 0);
    ObjectPuller::Outbox h;
    holder.on_request(rank, request.body.data(), request.body.size(), h);
    const OutMsg* reply = find(h, Msg::kPullReply);
    EXPECT_NE(reply, nullptr);
    ObjectPuller::Outbox r;
    if (reply) who.on_reply(0, reply->body.data(), reply->body.size(), r);
    return r;
  }
  // Ranks 1 and 2 of one node pull the same 1 MiB object at once, and the holder answers both
  // (rank 1's request first): what each reader's puller returned.
  std::pair<ObjectPuller::Outbox, ObjectPuller::Outbox> two_pulls(Got& first, Got& second) {
    put_primary(*node0.store, kMiB);
    ObjectPuller::Outbox o1, o2;
    reader.pull(kId, 0, kMiB, false, into(first), o1);
    neighbour.pull(kId, 0, kMiB, false, into(second), o2);
    ObjectPuller::Outbox r1 = answer(reader, 1, o1.msgs.at(0));
    return {std::move(r1), answer(neighbour, 2, o2.msgs.at(0))};
  }
  // What UCX would do: the bytes at the offset of the holder's segment, into the copy.
  void rma(const ObjectPuller::Read& r) {
    std::memcpy(r.copy->data().data(), static_cast<const char*>(node0.store->base()) + r.offset,
                r.size);
  }
};

void expect_pattern(const detail::Payload& p, size_t size) {
  ASSERT_EQ(p.size(), size);
  for (size_t i = 0; i < size; ++i)
    ASSERT_EQ(static_cast<unsigned char>(p.data()[i]), static_cast<unsigned char>(i * 7 + 1))
        << "byte " << i;
}

TEST(ObjectPuller, APullCopiesEveryByteAndTheHolderUnpinsWhenItIsDone) {
  Cluster c;
  put_primary(*c.node0.store, 3 * kMiB + 5);
  Got got;
  ObjectPuller::Outbox out;
  c.reader.pull(kId, 0, 3 * kMiB + 5, /*owner_record=*/false, into(got), out);
  ASSERT_EQ(out.msgs.size(), 1u);
  ObjectPuller::Outbox r = c.answer(c.reader, 1, out.msgs[0]);
  EXPECT_EQ(c.holder.lent(), 1u) << "the holder pins the object while the reader copies";
  ASSERT_EQ(r.reads.size(), 1u);
  EXPECT_EQ(r.reads[0].holder, 0);
  c.rma(r.reads[0]);
  ObjectPuller::Outbox done;
  c.reader.on_read_done(r.reads[0], true, "", done);
  ASSERT_EQ(got.calls, 1);
  ASSERT_TRUE(got.payload) << got.error.message;
  expect_pattern(*got.payload, 3 * kMiB + 5);
  const OutMsg* pd = find(done, Msg::kPullDone);
  ASSERT_NE(pd, nullptr);
  c.holder.on_done(1, pd->body.data(), pd->body.size());
  EXPECT_EQ(c.holder.lent(), 0u);
  EXPECT_EQ(c.reader.pulls(), 0u);
}

TEST(ObjectPuller, TwoWaitersOnOneRankMakeOneRequest) {
  Cluster c;
  put_primary(*c.node0.store, kMiB);
  Got a, b;
  ObjectPuller::Outbox out;
  c.reader.pull(kId, 0, kMiB, true, into(a), out);
  c.reader.pull(kId, 0, kMiB, false, into(b), out);
  ASSERT_EQ(out.msgs.size(), 1u);
  ObjectPuller::Outbox r = c.answer(c.reader, 1, out.msgs[0]);
  c.rma(r.reads.at(0));
  ObjectPuller::Outbox done;
  c.reader.on_read_done(r.reads[0], true, "", done);
  ASSERT_TRUE(a.payload && b.payload);
  expect_pattern(*b.payload, kMiB);
}

TEST(ObjectPuller, ASameNodeHolderOrACopyHereNeedsNoMessage) {
  Cluster c;
  put_primary(*c.node1.store, kMiB);  // as if rank 2 of this node produced it
  Got got;
  ObjectPuller::Outbox out;
  c.reader.pull(kId, 2, kMiB, false, into(got), out);  // holder on this node
  EXPECT_TRUE(out.msgs.empty());
  ASSERT_TRUE(got.payload);
  Got again;
  c.reader.pull(kId, 0, kMiB, false, into(again), out);  // holder elsewhere, copy here
  EXPECT_TRUE(out.msgs.empty());
  ASSERT_TRUE(again.payload);
  expect_pattern(*again.payload, kMiB);
}

TEST(ObjectPuller, AHolderWithoutTheObjectFailsThePullNamingBothNodes) {
  Cluster c;
  Got got;
  ObjectPuller::Outbox out;
  c.reader.pull(kId, 0, kMiB, false, into(got), out);
  c.answer(c.reader, 1, out.msgs.at(0));
  ASSERT_EQ(got.calls, 1);
  EXPECT_FALSE(got.payload);
  EXPECT_EQ(got.error.kind, detail::ErrorKind::kObjectLost);
  EXPECT_NE(got.error.message.find("from rank 0 on node 0 to rank 1 on node 1"), std::string::npos)
      << got.error.message;
  EXPECT_NE(got.error.message.find("does not hold it"), std::string::npos) << got.error.message;
}

TEST(ObjectPuller, ASecondRankOfTheNodeWaitsForTheFirstOnesCopy) {
  Cluster c;
  Got first, second;
  auto [r1, r2] = c.two_pulls(first, second);  // rank 1 makes the copy
  EXPECT_TRUE(r2.reads.empty()) << "rank 2 must not write the copy rank 1 is writing";
  EXPECT_TRUE(r2.recheck);
  EXPECT_NE(find(r2, Msg::kPullDone), nullptr) << "rank 2 unpins the holder at once";
  ObjectPuller::Outbox again;
  c.neighbour.recheck(std::chrono::steady_clock::now(), again);
  EXPECT_TRUE(again.recheck);  // still being written
  EXPECT_EQ(second.calls, 0);
  c.rma(r1.reads.at(0));
  ObjectPuller::Outbox done;
  c.reader.on_read_done(r1.reads[0], true, "", done);
  ObjectPuller::Outbox last;
  c.neighbour.recheck(std::chrono::steady_clock::now(), last);
  EXPECT_FALSE(last.recheck);
  ASSERT_TRUE(second.payload) << second.error.message;
  expect_pattern(*second.payload, kMiB);
}

TEST(ObjectPuller, ACopyTheOtherRankGivesUpMakesThisOneAskTheHolderItself) {
  Cluster c;
  Got first, second;
  auto [r1, unused] = c.two_pulls(first, second);
  ObjectPuller::Outbox failed;
  c.reader.on_read_done(r1.reads.at(0), false, "Endpoint timeout", failed);
  ASSERT_EQ(first.calls, 1);
  EXPECT_NE(first.error.message.find("RMA read failed: Endpoint timeout"), std::string::npos);
  r1.reads.clear();  // the unsealed copy goes: the store forgets it
  ObjectPuller::Outbox retry;
  c.neighbour.recheck(std::chrono::steady_clock::now(), retry);
  const OutMsg* req = find(retry, Msg::kPullRequest);
  ASSERT_NE(req, nullptr) << "rank 2 must ask the holder again, not inherit rank 1's failure";
  ObjectPuller::Outbox r2 = c.answer(c.neighbour, 2, *req);
  c.rma(r2.reads.at(0));
  ObjectPuller::Outbox done;
  c.neighbour.on_read_done(r2.reads[0], true, "", done);
  ASSERT_TRUE(second.payload) << second.error.message;
  expect_pattern(*second.payload, kMiB);
}

TEST(ObjectPuller, AFailedHolderFailsItsPullsAndAFailedReadersPinsGo) {
  Cluster c;
  put_primary(*c.node0.store, kMiB);
  Got got;
  ObjectPuller::Outbox out;
  c.reader.pull(kId, 0, kMiB, false, into(got), out);
  ObjectPuller::Outbox h;
  c.holder.on_request(1, out.msgs[0].body.data(), out.msgs[0].body.size(), h);
  EXPECT_EQ(c.holder.lent(), 1u);
  ObjectPuller::Outbox ignored;
  c.holder.peer_failed(1, "no heartbeat", ignored);  // the reader died while copying
  EXPECT_EQ(c.holder.lent(), 0u);
  // And the holder, before its reply came: it was the owner too, so nobody else has a copy.
  c.reader.peer_failed(0, "UCX endpoint error", ignored);
  EXPECT_TRUE(ignored.msgs.empty());
  ASSERT_EQ(got.calls, 1);
  EXPECT_EQ(got.error.kind, detail::ErrorKind::kObjectLost);
  EXPECT_NE(got.error.message.find("rank 0, which holds it, failed (UCX endpoint error)"),
            std::string::npos)
      << got.error.message;
  // Its late reply changes nothing.
  ObjectPuller::Outbox late;
  c.reader.on_reply(0, h.msgs.at(0).body.data(), h.msgs[0].body.size(), late);
  EXPECT_TRUE(late.reads.empty());
  EXPECT_EQ(got.calls, 1);
}

// Three nodes: rank 0 owns the object and keeps a copy on node 0, rank 1 (node 1) produced it
// and holds the primary, rank 2 (node 2) reads it.
struct OwnerCopy {
  TempStore owner_node{"o"}, holder_node{"h"}, reader_node{"r"};
  net::Topology t0 = three(0), t1 = three(1), t2 = three(2);
  FailedRanks failed{3};
  ObjectPuller owner{t0, owner_node.store.get(), &failed};
  ObjectPuller holder{t1, holder_node.store.get(), &failed};
  ObjectPuller reader{t2, reader_node.store.get(), &failed};
  static constexpr size_t kSize = kMiB + 3;

  OwnerCopy() {
    put_primary(*owner_node.store, kSize);  // the owner's copy (its pattern is the same)
    put_primary(*holder_node.store, kSize);
  }
  static net::Topology three(int rank) {
    net::Topology t;
    t.rank = rank;
    t.size = 3;
    t.node_of_rank = {0, 1, 2};
    t.node = rank;
    t.num_nodes = 3;
    return t;
  }
  // `from` answers the reader's `request`; the reply reaches the reader.
  ObjectPuller::Outbox answer(ObjectPuller& from, const OutMsg& request) {
    ObjectPuller::Outbox h;
    from.on_request(2, request.body.data(), request.body.size(), h);
    ObjectPuller::Outbox r;
    reader.on_reply(request.dest, h.msgs.at(0).body.data(), h.msgs[0].body.size(), r);
    return r;
  }
  void rma(const ObjectPuller::Read& r, TempStore& from) {
    std::memcpy(r.copy->data().data(), static_cast<const char*>(from.store->base()) + r.offset,
                r.size);
  }
};

TEST(ObjectPuller, APullWhoseHolderFailsAsksTheOwnerWhichKeepsACopy) {
  OwnerCopy c;
  Got got;
  ObjectPuller::Outbox out;
  c.reader.pull(kId, 1, OwnerCopy::kSize, false, into(got), out);
  ASSERT_EQ(out.msgs.at(0).dest, 1);
  c.failed.add(1);
  ObjectPuller::Outbox moved;
  c.reader.peer_failed(1, "no heartbeat for 600 ms", moved);
  EXPECT_EQ(got.calls, 0) << got.error.message;
  const OutMsg* req = find(moved, Msg::kPullRequest);
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->dest, 0) << "the owner has the other copy";
  ObjectPuller::Outbox r = c.answer(c.owner, *req);
  c.rma(r.reads.at(0), c.owner_node);
  ObjectPuller::Outbox done;
  c.reader.on_read_done(r.reads[0], true, "", done);
  ASSERT_TRUE(got.payload) << got.error.message;
  expect_pattern(*got.payload, OwnerCopy::kSize);
  EXPECT_EQ(find(done, Msg::kPullDone)->dest, 0);
}

TEST(ObjectPuller, AHolderFailingMidReadMovesThePullToTheOwner) {
  OwnerCopy c;
  Got got;
  ObjectPuller::Outbox out;
  c.reader.pull(kId, 1, OwnerCopy::kSize, false, into(got), out);
  ObjectPuller::Outbox r1 = c.answer(c.holder, out.msgs.at(0));
  ASSERT_EQ(r1.reads.size(), 1u);  // reading from rank 1 when it dies
  c.failed.add(1);
  ObjectPuller::Outbox moved;
  c.reader.peer_failed(1, "UCX endpoint error", moved);
  ObjectPuller::Outbox r2 = c.answer(c.owner, *find(moved, Msg::kPullRequest));
  EXPECT_TRUE(r2.reads.empty()) << "the failed read's copy is still open";
  EXPECT_TRUE(r2.recheck);
  ObjectPuller::Outbox late;
  c.reader.on_read_done(r1.reads[0], false, "Endpoint timeout", late);
  EXPECT_EQ(got.calls, 0) << "the old read's failure is not the pull's: " << got.error.message;
  EXPECT_EQ(find(late, Msg::kPullDone), nullptr) << "nothing goes to a failed rank";
  r1.reads.clear();  // the unsealed copy goes
  ObjectPuller::Outbox again;
  c.reader.recheck(std::chrono::steady_clock::now(), again);
  const OutMsg* req = find(again, Msg::kPullRequest);
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->dest, 0);
  ObjectPuller::Outbox r3 = c.answer(c.owner, *req);
  c.rma(r3.reads.at(0), c.owner_node);
  ObjectPuller::Outbox done;
  c.reader.on_read_done(r3.reads[0], true, "", done);
  ASSERT_TRUE(got.payload) << got.error.message;
  expect_pattern(*got.payload, OwnerCopy::kSize);
}

TEST(ObjectPuller, ALocationWhoseHolderIsKnownFailedGoesToTheOwnerAtOnce) {
  OwnerCopy c;
  c.failed.add(1);
  Got got;
  ObjectPuller::Outbox out;
  c.reader.pull(kId, 1, OwnerCopy::kSize, false, into(got), out);
  ASSERT_EQ(out.msgs.size(), 1u);
  EXPECT_EQ(out.msgs[0].dest, 0);
}

TEST(ObjectPuller, TheOwnersOwnCopyAndAFailedOwnerHaveNowhereElseToGo) {
  OwnerCopy c;
  c.owner_node.store->remove(kId);  // the owner is still making its copy
  Got mine, theirs;
  ObjectPuller::Outbox out;
  c.owner.pull(kId, 1, OwnerCopy::kSize, /*owner_record=*/true, into(mine), out);
  c.reader.pull(kId, 1, OwnerCopy::kSize, false, into(theirs), out);
  c.failed.add(0);
  c.failed.add(1);
  ObjectPuller::Outbox o1, o2;
  c.owner.peer_failed(1, "host lost", o1);
  c.reader.peer_failed(1, "host lost", o2);
  EXPECT_TRUE(o1.msgs.empty());
  EXPECT_TRUE(o2.msgs.empty());
  for (Got* g : {&mine, &theirs}) {
    ASSERT_EQ(g->calls, 1);
    EXPECT_EQ(g->error.kind, detail::ErrorKind::kObjectLost);
    EXPECT_NE(g->error.message.find("rank 1, which holds it, failed (host lost)"),
              std::string::npos)
        << g->error.message;
  }
  Got later;
  c.reader.pull(kId, 1, OwnerCopy::kSize, false, into(later), out);
  ASSERT_EQ(later.calls, 1);
  EXPECT_NE(later.error.message.find("which has failed, and no other rank holds it"),
            std::string::npos)
      << later.error.message;
}

TEST(ObjectPuller, ARankWithoutAStoreFailsThePullSayingSo) {
  net::Topology t = topology(1);
  ObjectPuller p(t, nullptr);
  Got got;
  ObjectPuller::Outbox out;
  p.pull(kId, 0, kMiB, false, into(got), out);
  EXPECT_TRUE(out.msgs.empty());
  EXPECT_NE(got.error.message.find("no object store on rank 1"), std::string::npos);
}

// The reader's node store is full of a spillable primary: the copy is not made at the reply,
// and the reply is held instead of waiting there (the loop's turns carry heartbeats); it is
// made from a later retry_room once spilling freed room, every byte right.
TEST(ObjectPuller, AReplyWithoutRoomIsHeldAndMadeOnceSpillingFreesRoom) {
  Cluster c;
  const ObjectId filler{1, 0, 7};
  {
    store::WritableObject w = c.node1.store->create(filler, 12 * kMiB, /*primary=*/true).take();
    w.seal();
  }
  put_primary(*c.node0.store, 6 * kMiB);
  Got got;
  ObjectPuller::Outbox out;
  c.reader.pull(kId, 0, 6 * kMiB, false, into(got), out);
  ObjectPuller::Outbox r = c.answer(c.reader, 1, out.msgs.at(0));
  EXPECT_TRUE(r.reads.empty()) << "no room yet: no copy to read into";
  EXPECT_EQ(got.calls, 0);
  EXPECT_EQ(c.reader.pulls(), 1u);
  EXPECT_EQ(c.holder.lent(), 1u) << "the holder keeps its pin while the reader waits for room";
  EXPECT_FALSE(c.reader.room_due(ObjectPuller::Clock::now())) << "retried after kRoomRetry";
  ObjectPuller::Outbox again;
  for (int i = 0; i < 30000 && again.reads.empty() && got.calls == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (c.reader.room_due(ObjectPuller::Clock::now())) c.reader.retry_room(again);
  }
  ASSERT_EQ(again.reads.size(), 1u) << got.error.message;
  c.rma(again.reads[0]);
  ObjectPuller::Outbox done;
  c.reader.on_read_done(again.reads[0], true, "", done);
  ASSERT_TRUE(got.payload) << got.error.message;
  expect_pattern(*got.payload, 6 * kMiB);
  EXPECT_FALSE(c.reader.room_due(ObjectPuller::Clock::now() + std::chrono::seconds(1)));
  const OutMsg* pd = find(done, Msg::kPullDone);
  ASSERT_NE(pd, nullptr);
  c.holder.on_done(1, pd->body.data(), pd->body.size());
  EXPECT_EQ(c.holder.lent(), 0u);
}

// A holder asked for an object it has spilled does not read it back on the loop: on_request
// returns a Restore; the I/O (restore(), a pool thread in the runtime) brings it back, and
// restored() answers the reader, whose copy then holds every byte.
TEST(ObjectPuller, ASpilledObjectIsRestoredOffTheLoopBeforeTheHolderAnswers) {
  Cluster c;
  put_primary(*c.node0.store, 4 * kMiB);
  {  // a second primary pushes the holder's store past its spill threshold: kId (older) spills
    store::WritableObject w =
        c.node0.store->create(ObjectId{0, 0, 43}, 10 * kMiB, /*primary=*/true).take();
    w.seal();
  }
  for (int i = 0; i < 10000 && std::strcmp(c.node0.store->info(kId).where, "spilled") != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_STREQ(c.node0.store->info(kId).where, "spilled");
  Got got;
  ObjectPuller::Outbox out;
  c.reader.pull(kId, 0, 4 * kMiB, false, into(got), out);
  ObjectPuller::Outbox h;
  c.holder.on_request(1, out.msgs.at(0).body.data(), out.msgs.at(0).body.size(), h);
  EXPECT_EQ(find(h, Msg::kPullReply), nullptr) << "no answer before the restore";
  ASSERT_EQ(h.restores.size(), 1u);
  EXPECT_EQ(h.restores[0].src, 1);
  EXPECT_STREQ(c.node0.store->info(kId).where, "spilled") << "the request itself read nothing";
  std::optional<store::ObjectView> view;
  std::string error;
  ObjectPuller::restore(*c.node0.store, h.restores[0], &view, &error);
  ASSERT_TRUE(view) << error;
  ObjectPuller::Outbox answered;
  c.holder.restored(h.restores[0], std::move(view), error, answered);
  const OutMsg* reply = find(answered, Msg::kPullReply);
  ASSERT_NE(reply, nullptr);
  EXPECT_EQ(c.holder.lent(), 1u);
  ObjectPuller::Outbox r;
  c.reader.on_reply(0, reply->body.data(), reply->body.size(), r);
  ASSERT_EQ(r.reads.size(), 1u);
  c.rma(r.reads[0]);
  ObjectPuller::Outbox done;
  c.reader.on_read_done(r.reads[0], true, "", done);
  ASSERT_TRUE(got.payload) << got.error.message;
  expect_pattern(*got.payload, 4 * kMiB);
}

}  // namespace
}  // namespace weft::core
