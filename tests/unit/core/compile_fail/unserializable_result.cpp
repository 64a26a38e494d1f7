// Must not compile: a task returns Opaque, which has no serialization
// (tests/unit/core/CMakeLists.txt checks the compiler names Opaque and the three ways out).
#include <weft/weft.hpp>

struct Opaque {
  std::string text;
};

Opaque make() { return {"x"}; }
WEFT_REMOTE(make);

void submit() { weft::get(weft::task(make).remote()); }
