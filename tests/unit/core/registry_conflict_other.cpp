// The other half of registry_conflict_test.cpp: registrations under the same names as there,
// for different functions and classes.
#include <weft/weft.hpp>

namespace beta {
int scale(int x) { return 3 * x; }
WEFT_REMOTE(scale);
}  // namespace beta

namespace {
struct Counter {
  explicit Counter(int start) : n(start) {}
  int n;
};
}  // namespace
WEFT_ACTOR(Counter, int);
