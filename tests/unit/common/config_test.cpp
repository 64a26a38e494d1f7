#include "common/config.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "weft/errors.hpp"

namespace weft {

TEST(Config, FlagsOverrideEnvironmentAndAreRemovedFromArgv) {
  setenv("WEFT_INLINE_THRESHOLD", "1K", 1);
  char a0[] = "app", a1[] = "--weft-inline-threshold=64K", a2[] = "--mine", a3[] = "--weft-log-level",
       a4[] = "debug";
  char* argv_storage[] = {a0, a1, a2, a3, a4, nullptr};
  char** argv = argv_storage;
  int argc = 5;
  Config c = Config::from_env_and_args(&argc, &argv);
  EXPECT_EQ(argc, 2);
  EXPECT_STREQ(argv[1], "--mine");
  EXPECT_EQ(c.get_bytes("inline_threshold", 0), 64 * 1024);
  EXPECT_EQ(c.get("log-level", ""), "debug");
  unsetenv("WEFT_INLINE_THRESHOLD");
}

TEST(Config, ByteSizesAcceptSuffixes) {
  EXPECT_EQ(Config::parse_bytes("4096", "x"), 4096);
  EXPECT_EQ(Config::parse_bytes("2G", "x"), int64_t{2} << 30);
  EXPECT_EQ(Config::parse_bytes("1.5MiB", "x"), 3 * 512 * 1024);
  EXPECT_THROW(Config::parse_bytes("-1", "x"), ConfigError);
}

TEST(Config, MalformedValuesAreClearErrors) {
  Config c;
  c.set("workers", "many");
  EXPECT_THROW(c.get_int("workers", 1), ConfigError);
  c.set("size", "12Q");
  try {
    c.get_bytes("size", 0);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("size"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("12Q"), std::string::npos);
  }
}

}  // namespace weft
