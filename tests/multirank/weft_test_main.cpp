// GoogleTest main for multi-rank tests: the tests run in the driver (rank 0) and use the other
// ranks through Weft, exactly as an application does.
#include <gtest/gtest.h>
#include <weft/weft.hpp>

int main(int argc, char** argv) {
  weft::Runtime rt(&argc, &argv);
  if (!rt.is_driver()) return rt.serve();
  ::testing::InitGoogleTest(&argc, argv);
  int code = RUN_ALL_TESTS();
  rt.set_exit_code(code);
  return code;
}
