// A chaos run (issue #10): `mpirun --enable-recovery -n 6`, ranks 1-5 workers ("worker" slots,
// and "pN" naming rank N), three of them SIGKILLed at random points while the job runs (before
// the driver reads a random result, so always with work queued, running and moving):
//  * 2,000 independent 1 ms tasks, every 40th returning a 1 MiB vector (stored);
//  * 40 chains of 10 dependent tasks, each link taking the previous one's result;
//  * an accumulating actor (checkpoint_every = 1, max_restarts = -1, max_task_retries = -1)
//    that gets 300 calls.
// Every result is checked: tasks and chain ends equal their formula, the actor's total equals
// the sum of what was sent, with each call counted exactly once. The victims and times come
// from a seed (printed; WEFTDEV_CHAOS_SEED sets it) so a failing run can be replayed.
// Prints CHAOS_OK, or FAILED: ... and a non-zero driver exit code.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>
#include <weft/weft.hpp>

using namespace std::chrono_literals;

namespace {

constexpr int kWorkers = 5, kKills = 3;
constexpr int kTasks = 2000, kChains = 40, kLinks = 10, kCalls = 300;
constexpr uint64_t kBig = 1 << 17;  // doubles: 1 MiB

void spin_for(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

int64_t square(int64_t i) {
  spin_for(1ms);
  return i * i;
}
std::vector<double> big(int64_t i) {
  spin_for(1ms);
  return std::vector<double>(kBig, static_cast<double>(i));
}
int64_t chain_link(int64_t prev, int64_t step) {
  spin_for(500us);
  return prev * 3 % 1000003 + step;
}
int pid_of() { return static_cast<int>(getpid()); }

class Total {
 public:
  Total() = default;
  int64_t add(int64_t v) {
    sum_ += v;
    ++calls_;
    return calls_;
  }
  std::pair<int64_t, int64_t> read() const { return {sum_, calls_}; }
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& sum_& calls_;
  }

 private:
  int64_t sum_ = 0, calls_ = 0;
};

weft::TaskOptions on_worker() {
  weft::TaskOptions o;
  o.resources = {{"worker", 1}};
  o.max_retries = -1;
  return o;
}

int fail(const std::string& why) {
  std::printf("FAILED: %s\n", why.c_str());
  std::fflush(stdout);
  return 1;
}

int drive() {
  if (weft::world_size() != kWorkers + 1) return fail("needs 6 ranks");
  unsigned seed = std::random_device{}();
  if (const char* s = std::getenv("WEFTDEV_CHAOS_SEED")) seed = std::strtoul(s, nullptr, 10);
  std::printf("chaos seed %u (WEFTDEV_CHAOS_SEED=%u replays it)\n", seed, seed);
  std::mt19937 rng(seed);

  // Who is who: one task on each worker rank says its pid.
  std::vector<int> pids(kWorkers + 1, 0);
  for (int r = 1; r <= kWorkers; ++r) {
    weft::TaskOptions o;
    o.resources = {{"p" + std::to_string(r), 1}};
    pids[r] = weft::task(pid_of).options(o).remote().get(60s);
  }
  std::vector<int> victims{1, 2, 3, 4, 5};
  std::shuffle(victims.begin(), victims.end(), rng);
  victims.resize(kKills);
  // When: before the driver reads result number kill_at[k] (out of kTasks), so every kill
  // lands while work is queued, running or moving, whatever the machine's speed.
  std::vector<int> kill_at;
  for (int k = 0; k < kKills; ++k)
    kill_at.push_back(std::uniform_int_distribution<int>(kTasks / 50, kTasks * 3 / 5)(rng));
  std::sort(kill_at.begin(), kill_at.end());

  weft::ActorOptions ao;
  ao.resources = {{"worker", 1}};
  ao.max_restarts = -1;
  ao.max_task_retries = -1;
  ao.checkpoint_every = 1;
  auto total = weft::actor<Total>().options(ao).remote();
  total.ready().get(60s);

  const auto t0 = std::chrono::steady_clock::now();
  size_t killed = 0;
  auto maybe_kill = [&](int i) {
    while (killed < kill_at.size() && kill_at[killed] == i) {
      const int v = victims[killed++];
      std::printf(
          "chaos: SIGKILL rank %d (pid %d) before result %d, at %.0f ms\n", v, pids[v], i,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      std::fflush(stdout);
      kill(pids[v], SIGKILL);
    }
  };

  std::vector<weft::ObjectRef<int64_t>> squares;
  std::vector<weft::ObjectRef<std::vector<double>>> bigs;
  std::vector<weft::ObjectRef<int64_t>> chain_ends;
  std::vector<weft::ObjectRef<int64_t>> adds;
  int64_t sent = 0;
  for (int i = 0; i < kTasks; ++i) {
    if (i % 40 == 0)
      bigs.push_back(weft::task(big).options(on_worker()).remote(int64_t{i}));
    else
      squares.push_back(weft::task(square).options(on_worker()).remote(int64_t{i}));
    if (i < kChains) {
      weft::ObjectRef<int64_t> r =
          weft::task(chain_link).options(on_worker()).remote(int64_t{i}, int64_t{0});
      for (int s = 1; s < kLinks; ++s)
        r = weft::task(chain_link).options(on_worker()).remote(r, int64_t{s});
      chain_ends.push_back(r);
    }
    if (i % (kTasks / kCalls) == 0 && static_cast<int>(adds.size()) < kCalls) {
      adds.push_back(total.task(&Total::add).remote(int64_t{i}));
      sent += i;
    }
  }

  int bad = 0;
  size_t k = 0;
  for (int i = 0; i < kTasks; ++i) {
    maybe_kill(i);
    if (i % 40 == 0) {
      std::vector<double> v = bigs[i / 40].get(180s);
      if (v.size() != kBig || v.front() != i || v.back() != i) ++bad;
    } else if (squares[k++].get(180s) != int64_t{i} * i) {
      ++bad;
    }
  }
  for (int c = 0; c < kChains; ++c) {
    int64_t got = chain_ends[c].get(180s);
    int64_t expect = int64_t{c} * 3 % 1000003;  // the first link: chain_link(c, 0)
    for (int s = 1; s < kLinks; ++s) expect = expect * 3 % 1000003 + s;
    if (got != expect) ++bad;
  }
  for (size_t a = 0; a < adds.size(); ++a) adds[a].get(180s);
  auto [sum, calls] = total.task(&Total::read).remote().get(180s);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "chaos: %zu tasks, %d chains, %zu actor calls in %.2f s; actor total %lld over %lld calls "
      "(sent %lld over %zu)\n",
      squares.size() + bigs.size(), kChains, adds.size(), secs, static_cast<long long>(sum),
      static_cast<long long>(calls), static_cast<long long>(sent), adds.size());
  if (bad) return fail(std::to_string(bad) + " wrong results");
  if (sum != sent || calls != static_cast<int64_t>(adds.size()))
    return fail("the actor's state lost or repeated calls");
  std::printf("CHAOS_OK\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace

WEFT_REMOTE(square);
WEFT_REMOTE(big);
WEFT_REMOTE(chain_link);
WEFT_REMOTE(pid_of);
WEFT_ACTOR(Total);
WEFT_REMOTE(&Total::add);
WEFT_REMOTE(&Total::read);

int main(int argc, char** argv) {
  int code = weft::run(argc, argv, drive);
  std::printf("rank exit code %d\n", code);
  std::fflush(stdout);
  return code;
}
