// Tasks retried by their owner (issue #10): run under `mpirun --enable-recovery -n 4` with
// WEFT_RESOURCES giving ranks 1-3 a "worker" slot, so tasks never run on the driver. A task that
// SIGKILLs the rank running it on its first attempt is retried on a live rank and returns its
// value; with max_retries = 0 the same death is an ObjectLostError saying it was not retried; a
// task that throws is retried only with retry_exceptions, and when its retries run out the error
// says how many attempts ran and where; tasks submitted after two deaths run on the rank left.
// Prints TASK_RETRY_OK, or FAILED: ... and a non-zero driver exit code.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <weft/weft.hpp>

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// First attempt (no marker yet): leave a marker, then the rank dies. Later attempts: the value.
int die_once(std::string marker, int value) {
  if (!fs::exists(marker)) {
    std::ofstream(marker) << weft::rank();
    std::fflush(nullptr);
    raise(SIGKILL);
  }
  return value;
}
// Throws until `marker` has `fails` lines, one per failed attempt.
int throw_until(std::string marker, int fails, int value) {
  int seen = 0;
  {
    std::ifstream in(marker);
    std::string line;
    while (std::getline(in, line)) ++seen;
  }
  if (seen < fails) {
    std::ofstream(marker, std::ios::app) << weft::rank() << "\n";
    throw std::runtime_error("attempt " + std::to_string(seen + 1) + " refused");
  }
  return value;
}
int where() { return weft::rank(); }

weft::TaskOptions on_worker(int max_retries, bool retry_exceptions = false) {
  weft::TaskOptions o;
  o.resources = {{"worker", 1}};
  o.max_retries = max_retries;
  o.retry_exceptions = retry_exceptions;
  return o;
}

int fail(const std::string& why) {
  std::printf("FAILED: %s\n", why.c_str());
  std::fflush(stdout);
  return 1;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

int drive() {
  if (weft::world_size() != 4) return fail("needs 4 ranks");
  const fs::path dir = fs::temp_directory_path() / ("weft-retry-" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto marker = [&](const char* name) { return (dir / name).string(); };

  // A worker dies under the task: retried elsewhere, the value comes back.
  int v = weft::task(die_once).options(on_worker(1)).remote(marker("a"), 41).get(60s);
  if (v != 41) return fail("die_once returned " + std::to_string(v));
  std::printf("retried after its rank died: %d\n", v);

  // max_retries = 0: the death is an error that says it was not retried.
  try {
    weft::task(die_once).options(on_worker(0)).remote(marker("b"), 1).get(60s);
    return fail("a task whose rank died with max_retries = 0 returned");
  } catch (const weft::ObjectLostError& e) {
    if (!contains(e.what(), "not retried")) return fail(std::string("wrong text: ") + e.what());
    std::printf("not retried: %s\n", e.what());
  }

  // Exceptions: retried only with retry_exceptions.
  try {
    weft::task(throw_until).options(on_worker(3)).remote(marker("c"), 1, 7).get(60s);
    return fail("an exception was retried without retry_exceptions");
  } catch (const weft::TaskError& e) {
    if (!contains(e.what(), "attempt 1 refused"))
      return fail(std::string("wrong text: ") + e.what());
  }
  v = weft::task(throw_until).options(on_worker(3, true)).remote(marker("d"), 2, 8).get(60s);
  if (v != 8) return fail("throw_until returned " + std::to_string(v));
  try {
    weft::task(throw_until).options(on_worker(2, true)).remote(marker("e"), 100, 9).get(60s);
    return fail("a task that always throws returned");
  } catch (const weft::TaskError& e) {
    if (!contains(e.what(), "3 attempts, on ranks") || !contains(e.what(), "max_retries used up"))
      return fail(std::string("the exhausted error does not count its attempts: ") + e.what());
    std::printf("exhausted: %s\n", e.what());
  }

  // Work submitted after the deaths runs on the live workers only, and never hangs.
  std::vector<weft::ObjectRef<int>> rs;
  for (int i = 0; i < 20; ++i) rs.push_back(weft::task(where).options(on_worker(3)).remote());
  for (auto& r : rs) {
    int rank = r.get(60s);
    if (rank == 0) return fail("a worker task ran on the driver");
  }
  fs::remove_all(dir);
  std::printf("TASK_RETRY_OK\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace

WEFT_REMOTE(die_once);
WEFT_REMOTE(throw_until);
WEFT_REMOTE(where);

int main(int argc, char** argv) {
  int code = weft::run(argc, argv, drive);
  std::printf("rank exit code %d\n", code);
  std::fflush(stdout);
  return code;
}
