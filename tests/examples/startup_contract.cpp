// What weft::run promises about its arguments and about being started twice (docs/api.md,
// "Starting"). Run with: startup_contract --weft-log-level=warn app-arg --weft-ucx-wakeup last
// Prints "startup contract OK" on rank 0 when every promise holds; exits 1 otherwise.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <weft/weft.hpp>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "startup_contract: FAILED: %s\n", what.c_str());
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string argv0 = argv[0];
  const int code = weft::run(argc, argv, [&] {
    // The flags are gone from argc/argv and from weft::args(); argv ends with NULL.
    expect(argc == 3, "argc is 3 (argv[0], app-arg, last), got " + std::to_string(argc));
    expect(argc >= 3 && std::strcmp(argv[1], "app-arg") == 0, "argv[1] is app-arg");
    expect(argc >= 3 && std::strcmp(argv[2], "last") == 0, "argv[2] is last");
    expect(argv[argc] == nullptr, "argv[argc] is NULL");
    const std::vector<std::string> want = {argv0, "app-arg", "last"};
    expect(weft::args() == want, "weft::args() is {argv[0], app-arg, last}");
    return 0;
  });
  expect(code == 0, "the first run returns 0");
  expect(argc == 3, "argc stays updated after run returns");
  // Weft starts once per process: a second run is a weft::Error that says so, not an MPI abort.
  try {
    weft::run(argc, argv, [] { return 0; });
    expect(false, "a second weft::run throws weft::Error");
  } catch (const weft::Error& e) {
    const std::string m = e.what();
    expect(m.find("Weft cannot start again in this process") != std::string::npos &&
               m.find("MPI was finalized") != std::string::npos,
           "the second run's error says why: " + m);
  }
  if (failures == 0 && weft::rank() == 0) std::printf("startup contract OK\n");
  return failures == 0 ? 0 : 1;
}
