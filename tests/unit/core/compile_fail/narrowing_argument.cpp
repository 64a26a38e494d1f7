// Must not compile: 1.5 passed to an int parameter would be silently truncated to 1
// (tests/unit/core/CMakeLists.txt checks the compiler names the reason).
#include <weft/weft.hpp>

int twice(int x) { return 2 * x; }
WEFT_REMOTE(twice);

void submit() { weft::task(twice).remote(1.5); }
