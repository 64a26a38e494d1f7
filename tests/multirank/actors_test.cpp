// Actors across ranks: state, ordering per caller, named lookup, kill, concurrency, errors.
#include <gtest/gtest.h>
#include <weft/weft.hpp>

#include <atomic>
#include <chrono>
#include <thread>

using namespace std::chrono_literals;

class Counter {
 public:
  explicit Counter(int start) : n_(start) {}
  int incr(int by) { return n_ += by; }
  int value() const { return n_; }
  int rank() const { return weft::rank(); }
  std::vector<int> history() const { return seen_; }
  void record(int x) { seen_.push_back(x); }
  int fail() { throw std::runtime_error("counter refused"); }

 private:
  int n_;
  std::vector<int> seen_;
};
WEFT_ACTOR(Counter, int);
WEFT_REMOTE(&Counter::incr);
WEFT_REMOTE(&Counter::value);
WEFT_REMOTE(&Counter::rank);
WEFT_REMOTE(&Counter::history);
WEFT_REMOTE(&Counter::record);
WEFT_REMOTE(&Counter::fail);

class Broken {
 public:
  explicit Broken(std::string why) { throw std::logic_error(why); }
  int ping() { return 1; }
};
WEFT_ACTOR(Broken, std::string);
WEFT_REMOTE(&Broken::ping);

class Sleeper {
 public:
  Sleeper() = default;
  int nap(int ms) {
    int now = ++active_;
    int peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    --active_;
    return ms;
  }
  int peak() const { return peak_.load(); }

 private:
  std::atomic<int> active_{0}, peak_{0};
};
WEFT_ACTOR(Sleeper);
WEFT_REMOTE(&Sleeper::nap);
WEFT_REMOTE(&Sleeper::peak);

namespace {
// Called on another rank with a handle: actor handles travel and work there.
int bump_from_elsewhere(weft::ActorHandle<Counter> c, int times) {
  weft::ObjectRef<int> last;
  for (int i = 0; i < times; ++i) last = c.task(&Counter::incr).remote(1);
  return weft::get(last);
}
int record_from(weft::ActorHandle<Counter> c, int base) {
  weft::ObjectRef<void> last;
  for (int i = 0; i < 20; ++i) last = c.task(&Counter::record).remote(base + i);
  last.get();  // the calls reached the actor before this caller reports back
  return weft::rank();
}
}  // namespace
WEFT_REMOTE(bump_from_elsewhere);
WEFT_REMOTE(record_from);

TEST(Actors, StateLivesAcrossCalls) {
  auto c = weft::actor<Counter>(10).remote();
  c.task(&Counter::incr).remote(5);
  EXPECT_EQ(c.task(&Counter::incr).remote(1).get(), 16);
  EXPECT_EQ(c.task(&Counter::value).remote().get(), 16);
}

TEST(Actors, CallsFromOneCallerRunInSubmissionOrder) {
  auto c = weft::actor<Counter>(0).remote();
  for (int i = 0; i < 200; ++i) c.task(&Counter::record).remote(i);
  auto h = c.task(&Counter::history).remote().get();
  ASSERT_EQ(h.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(h[i], i);
}

TEST(Actors, ArgumentRefsKeepOrder) {
  auto c = weft::actor<Counter>(0).remote();
  auto slow = weft::put(1);
  c.task(&Counter::record).remote(slow);
  c.task(&Counter::record).remote(2);
  auto h = c.task(&Counter::history).remote().get();
  EXPECT_EQ(h, (std::vector<int>{1, 2}));
}

TEST(Actors, SpreadOverRanks) {
  std::vector<weft::ActorHandle<Counter>> cs;
  for (int i = 0; i < 8; ++i) cs.push_back(weft::actor<Counter>(0).remote());
  std::set<int> ranks;
  for (auto& c : cs) ranks.insert(c.task(&Counter::rank).remote().get());
  EXPECT_EQ(static_cast<int>(ranks.size()), std::min(8, weft::world_size()));
}

TEST(Actors, CalledFromSeveralRanks) {
  auto c = weft::actor<Counter>(0).remote();
  std::vector<weft::ObjectRef<int>> rs;
  for (int i = 0; i < 4; ++i) rs.push_back(weft::task(bump_from_elsewhere).remote(c, 25));
  weft::get(rs);
  EXPECT_EQ(c.task(&Counter::value).remote().get(), 100);
}

TEST(Actors, EachRemoteCallerKeepsItsOwnOrder) {
  auto c = weft::actor<Counter>(0).remote();
  std::vector<weft::ObjectRef<int>> rs;
  for (int k = 0; k < 3; ++k) rs.push_back(weft::task(record_from).remote(c, k * 1000));
  weft::get(rs);
  auto h = c.task(&Counter::history).remote().get();
  ASSERT_EQ(h.size(), 60u);
  std::map<int, int> last;
  for (int x : h) {
    int base = x / 1000;
    if (last.count(base)) {
      EXPECT_GT(x, last[base]);
    }
    last[base] = x;
  }
}

TEST(Actors, NamedActorsAreFoundByName) {
  auto c = weft::actor<Counter>(7).options({.name = "named-ctr"}).remote();
  auto same = weft::get_actor<Counter>("named-ctr");
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->task(&Counter::incr).remote(1).get(), 8);
  EXPECT_EQ(same->id(), c.id());
  EXPECT_FALSE(weft::get_actor<Counter>("no-such-actor").has_value());
  // A second actor of that name: its handle comes back, and it says why it never existed.
  auto dup = weft::actor<Counter>(0).options({.name = "named-ctr"}).remote();
  try {
    dup.ready().get(30s);
    ADD_FAILURE() << "a second actor named named-ctr was created";
  } catch (const weft::ActorDiedError& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dup.task(&Counter::incr).remote(1).get(30s), weft::ActorDiedError);
  EXPECT_EQ(same->task(&Counter::incr).remote(1).get(), 9);  // the first one is untouched
  EXPECT_THROW(weft::get_actor<Sleeper>("named-ctr"), weft::Error);
}

TEST(Actors, KillThenCallRaisesActorDiedError) {
  auto c = weft::actor<Counter>(0).options({.name = "doomed"}).remote();
  EXPECT_EQ(c.task(&Counter::incr).remote(1).get(), 1);
  weft::kill(c);
  auto r = c.task(&Counter::incr).remote(1);
  EXPECT_THROW(r.get(10s), weft::ActorDiedError);
  // The name is released when the actor dies.
  for (int i = 0; i < 100 && weft::get_actor<Counter>("doomed"); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(weft::get_actor<Counter>("doomed").has_value());
}

TEST(Actors, FailedConstructorKillsTheActorWithItsReason) {
  auto b = weft::actor<Broken>(std::string("no config file")).remote();
  try {
    b.task(&Broken::ping).remote().get(10s);
    FAIL();
  } catch (const weft::ActorDiedError& e) {
    EXPECT_NE(std::string(e.what()).find("no config file"), std::string::npos) << e.what();
  }
}

TEST(Actors, MethodExceptionIsATaskErrorAndTheActorLives) {
  auto c = weft::actor<Counter>(3).remote();
  EXPECT_THROW(c.task(&Counter::fail).remote().get(), weft::TaskError);
  EXPECT_EQ(c.task(&Counter::value).remote().get(), 3);
}

TEST(Actors, MaxConcurrencyAllowsParallelCalls) {
  auto serial = weft::actor<Sleeper>().remote();
  auto par = weft::actor<Sleeper>().options({.max_concurrency = 4}).remote();
  std::vector<weft::ObjectRef<int>> rs;
  for (int i = 0; i < 4; ++i) rs.push_back(serial.task(&Sleeper::nap).remote(30));
  for (int i = 0; i < 4; ++i) rs.push_back(par.task(&Sleeper::nap).remote(100));
  weft::get(rs);
  EXPECT_EQ(serial.task(&Sleeper::peak).remote().get(), 1);
  EXPECT_GT(par.task(&Sleeper::peak).remote().get(), 1);
}

TEST(Actors, InfeasibleActorSaysSoOnReadyAndOnEveryCall) {
  auto a = weft::actor<Counter>(0).options({.num_gpus = 64}).remote();
  EXPECT_TRUE(a.valid());  // remote() returns at once, as in Ray
  try {
    a.ready().get(30s);
    ADD_FAILURE() << "an actor needing 64 GPUs was created";
  } catch (const weft::ActorDiedError& e) {
    EXPECT_NE(std::string(e.what()).find("never be placed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GPU"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.task(&Counter::incr).remote(1).get(30s), weft::ActorDiedError);
  EXPECT_THROW(a.rank(), weft::ActorDiedError);
}

// Creation never waits: not for the constructor's ref arguments, not for the constructor.
int slow_start(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return 100;
}
WEFT_REMOTE(slow_start);

TEST(Actors, RemoteReturnsBeforeItsArgumentsExistAndReadyWaitsForTheConstructor) {
  auto start = weft::task(slow_start).remote(1500);
  auto a = weft::actor<Counter>(start).remote();  // the constructor takes the value of `start`
  EXPECT_FALSE(start.ready()) << "actor<T>(ref).remote() waited for its argument";
  auto first = a.task(&Counter::incr).remote(1);  // queued behind the construction
  a.ready().get(30s);
  EXPECT_TRUE(start.ready());
  EXPECT_EQ(first.get(30s), 101);
  EXPECT_GE(a.rank(), 0);
  EXPECT_EQ(a.task(&Counter::incr).remote(1).get(30s), 102);
  weft::kill(a);
}

class Picky {
 public:
  explicit Picky(int n) {
    if (n < 0) throw std::invalid_argument("Picky needs n >= 0");
  }
  int one() { return 1; }
};
WEFT_ACTOR(Picky, int);
WEFT_REMOTE(&Picky::one);

TEST(Actors, AConstructorThatThrowsFailsReady) {
  EXPECT_NO_THROW(weft::actor<Picky>(1).remote().ready().get(30s));
  auto a = weft::actor<Picky>(-1).remote();
  try {
    a.ready().get(30s);
    ADD_FAILURE() << "Picky(-1) was constructed";
  } catch (const weft::ActorDiedError& e) {
    EXPECT_NE(std::string(e.what()).find("constructor"), std::string::npos) << e.what();
  }
}
