// The driver's exit code reaches every rank: `exit_code_probe N` returns N from the driver,
// `exit_code_probe throw` throws from it (exit code 1 and a message). Each rank prints its code.
#include <weft/weft.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "0";
  int code = weft::run(argc, argv, [&]() -> int {
    if (std::strcmp(what, "throw") == 0) throw std::runtime_error("driver gave up on purpose");
    return std::atoi(what);
  });
  std::printf("rank exit code %d\n", code);
  return code;
}
