// 07 — errors: every failure is a typed weft::Error. A remote exception comes back as TaskError
// (its type, message, function and rank); get with a deadline raises GetTimeoutError; calls to a
// dead actor raise ActorDiedError.
//   mpirun -n 4 ./07_errors
#include <weft/weft.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;

double checked_sqrt(double x) {
  if (x < 0) throw std::domain_error("negative input " + std::to_string(x));
  return std::sqrt(x);
}
WEFT_REMOTE(checked_sqrt);

double plus_one(double x) { return x + 1; }
WEFT_REMOTE(plus_one);

int nap(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return ms;
}
WEFT_REMOTE(nap);

class Loader {
 public:
  explicit Loader(std::string path) {
    if (path.empty()) throw std::invalid_argument("Loader needs a path");
  }
  int ping() { return 1; }
};
WEFT_ACTOR(Loader, std::string);
WEFT_REMOTE(&Loader::ping);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    int caught = 0;
    // 1. The remote exception, with where it happened.
    try {
      weft::task(checked_sqrt).remote(-4.0).get();
    } catch (const weft::TaskError& e) {
      std::printf("TaskError: type=%s function=%s rank=%d message=\"%s\"\n", e.type_name().c_str(),
                  e.function().c_str(), e.rank(), e.message().c_str());
      ++caught;
    }
    // 2. A failed dependency fails its dependents with the same error.
    try {
      weft::task(plus_one).remote(weft::task(checked_sqrt).remote(-1.0)).get();
    } catch (const weft::TaskError& e) {
      std::printf("dependent of a failed task: TaskError (%s)\n", e.type_name().c_str());
      ++caught;
    }
    // 3. A deadline. The task keeps running; the ref can be read again later.
    auto slow = weft::task(nap).remote(500);
    try {
      slow.get(20ms);
    } catch (const weft::GetTimeoutError& e) {
      std::printf("GetTimeoutError: %s\n", e.what());
      ++caught;
    }
    std::printf("read again without a deadline: %d\n", slow.get());
    // 4. An actor whose constructor threw is dead; its calls say why.
    auto bad = weft::actor<Loader>(std::string()).remote();
    try {
      bad.task(&Loader::ping).remote().get(10s);
    } catch (const weft::ActorDiedError& e) {
      std::printf("ActorDiedError: %s\n", e.what());
      ++caught;
    }
    // Every one of them is a weft::Error, so one handler can catch them all.
    try {
      weft::task(checked_sqrt).remote(-9.0).get();
    } catch (const weft::Error& e) {
      ++caught;
    }
    std::printf("caught %d of 5 expected errors\n", caught);
    return caught == 5 ? 0 : 1;
  });
}
