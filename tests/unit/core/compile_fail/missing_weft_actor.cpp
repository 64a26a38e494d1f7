// Must not compile: Counter has no WEFT_ACTOR, so remote callers cannot construct it
// (tests/unit/core/CMakeLists.txt checks the compiler says what to add).
#include <weft/weft.hpp>

class Counter {
 public:
  explicit Counter(int start) : n_(start) {}
  int get() const { return n_; }

 private:
  int n_;
};

void create() { weft::actor<Counter>(1).remote(); }
