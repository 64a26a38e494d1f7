// Must not compile: Opaque has no serialization (a std::string member keeps it from being copied
// as its bytes, and it has no serialize), here inside a vector argument
// (tests/unit/core/CMakeLists.txt checks the compiler names Opaque and the three ways out).
#include <weft/weft.hpp>

struct Opaque {
  std::string text;
};

double total(const std::vector<Opaque>& xs) { return static_cast<double>(xs.size()); }
WEFT_REMOTE(total);

void submit() { weft::task(total).remote(std::vector<Opaque>(3)); }
