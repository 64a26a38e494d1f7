#include "common/config.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cctype>
#include <fstream>
#include <initializer_list>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/settings.hpp"
#include "weft/errors.hpp"

namespace weft {
namespace {

// argv built from strings, NULL-terminated like a real one.
struct Args {
  explicit Args(std::initializer_list<const char*> a) {
    for (const char* s : a) store.emplace_back(s);
    for (auto& s : store) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
    argc = static_cast<int>(store.size());
    argv = ptrs.data();
  }
  std::vector<std::string> store;
  std::vector<char*> ptrs;
  int argc;
  char** argv;
};

// The message of the ConfigError that `fn` throws ("" when it throws none).
template <class F>
std::string config_error(F fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string flags_error(std::initializer_list<const char*> a) {
  Args args(a);
  return config_error([&] { Config::from_env_and_args(&args.argc, &args.argv); });
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Config, FlagsOverrideEnvironmentAndAreRemovedFromArgv) {
  setenv("WEFT_INLINE_THRESHOLD", "1K", 1);
  Args a({"app", "--weft-inline-threshold=64K", "--mine", "--weft-log-level=debug", "input.csv"});
  Config c = Config::from_env_and_args(&a.argc, &a.argv);
  unsetenv("WEFT_INLINE_THRESHOLD");
  ASSERT_EQ(a.argc, 3);
  EXPECT_STREQ(a.argv[0], "app");
  EXPECT_STREQ(a.argv[1], "--mine");
  EXPECT_STREQ(a.argv[2], "input.csv");
  EXPECT_EQ(a.argv[3], nullptr);  // NULL-terminated at the new end
  EXPECT_EQ(c.get_bytes("inline_threshold", 100 * 1024), 64 * 1024);
  EXPECT_EQ(c.get("log-level", ""), "debug");
}

TEST(Config, AValueFlagDoesNotTakeTheNextArgument) {
  // The issue's trap: a value-taking flag without '=' used to swallow the application's next
  // argument. Now it is an error that says how to write it.
  const std::string m = flags_error({"app", "--weft-inline-threshold", "input.csv"});
  EXPECT_TRUE(has(m, "inline_threshold")) << m;
  EXPECT_TRUE(has(m, "write --weft-inline-threshold=<value>")) << m;
}

TEST(Config, ABareBooleanFlagMeansTrueAndKeepsTheNextArgument) {
  Args a({"app", "--weft-ucx-wakeup", "input.csv"});
  setenv("WEFT_UCX_WAKEUP", "false", 1);
  Config c = Config::from_env_and_args(&a.argc, &a.argv);
  unsetenv("WEFT_UCX_WAKEUP");
  EXPECT_TRUE(c.get_bool("ucx_wakeup", true));
  ASSERT_EQ(a.argc, 2);
  EXPECT_STREQ(a.argv[1], "input.csv");
}

TEST(Config, ArgumentsAfterADoubleDashAreTheApplications) {
  Args a({"app", "--weft-virtual-nodes=2", "--", "--weft-bogus=1"});
  Config c = Config::from_env_and_args(&a.argc, &a.argv);
  EXPECT_EQ(c.get_int("virtual_nodes", 1), 2);
  ASSERT_EQ(a.argc, 3);
  EXPECT_STREQ(a.argv[1], "--");
  EXPECT_STREQ(a.argv[2], "--weft-bogus=1");
}

TEST(Config, AnUnknownFlagIsRejected) {
  const std::string m = flags_error({"app", "--weft-bogus=1"});
  EXPECT_TRUE(has(m, "unknown setting 'bogus'")) << m;
  EXPECT_TRUE(has(m, "--weft-bogus=1")) << m;
  EXPECT_TRUE(has(m, "docs/operations.md")) << m;
  EXPECT_FALSE(has(m, "did you mean")) << m;  // nothing is close to "bogus"
}

TEST(Config, AMisspeltFlagGetsTheClosestName) {
  const std::string m = flags_error({"app", "--weft-virtual-node=2"});
  EXPECT_TRUE(has(m, "unknown setting 'virtual_node'")) << m;
  EXPECT_TRUE(has(m, "did you mean virtual_nodes (--weft-virtual-nodes)?")) << m;
  const std::string t = flags_error({"app", "--weft-inlien-threshold=1K"});  // transposition
  EXPECT_TRUE(has(t, "did you mean inline_threshold")) << t;
}

TEST(Config, AnUnknownVariableIsRejected) {
  setenv("WEFT_BOGUS", "1", 1);
  const std::string m = config_error([] { Config::from_env(); });
  unsetenv("WEFT_BOGUS");
  EXPECT_TRUE(has(m, "unknown setting 'bogus' (WEFT_BOGUS=1)")) << m;
  EXPECT_TRUE(has(m, "every WEFT_* environment variable is read as a Weft setting")) << m;

  setenv("WEFT_VIRTUAL_NODE", "2", 1);
  const std::string n = config_error([] { Config::from_env(); });
  unsetenv("WEFT_VIRTUAL_NODE");
  EXPECT_TRUE(has(n, "did you mean virtual_nodes (WEFT_VIRTUAL_NODES)?")) << n;
}

TEST(Config, AScriptVariableThatMovedNamesItsNewName) {
  setenv("WEFT_CHECKPOINT_DIR", "/tmp/ck", 1);
  const std::string m = config_error([] { Config::from_env(); });
  unsetenv("WEFT_CHECKPOINT_DIR");
  EXPECT_TRUE(has(m, "WEFT_CHECKPOINT_DIR=/tmp/ck")) << m;
  EXPECT_TRUE(has(m, "the Slurm templates read WEFTJOB_CHECKPOINT_DIR now")) << m;
}

TEST(Config, MalformedValuesNameTheSettingAndWhereItCameFrom) {
  std::string m = flags_error({"app", "--weft-inline-threshold=10Q"});
  EXPECT_TRUE(has(m, "setting inline_threshold (--weft-inline-threshold=10Q)")) << m;
  EXPECT_TRUE(has(m, "expects a byte size")) << m;
  EXPECT_TRUE(has(m, "'10Q'")) << m;

  m = flags_error({"app", "--weft-credits=many"});
  EXPECT_TRUE(has(m, "setting credits (--weft-credits=many) expects an integer")) << m;

  m = flags_error({"app", "--weft-ucx-wakeup=maybe"});
  EXPECT_TRUE(has(m, "setting ucx_wakeup")) << m;
  EXPECT_TRUE(has(m, "expects true or false")) << m;

  m = flags_error({"app", "--weft-object-store-spill-threshold=high"});
  EXPECT_TRUE(has(m, "setting object_store_spill_threshold")) << m;
  EXPECT_TRUE(has(m, "expects a number")) << m;

  setenv("WEFT_RING_BYTES", "12Q", 1);
  m = config_error([] { Config::from_env(); });
  unsetenv("WEFT_RING_BYTES");
  EXPECT_TRUE(has(m, "setting ring_bytes (WEFT_RING_BYTES=12Q)")) << m;
}

TEST(Config, EnumSettingsNameTheValuesAllowed) {
  const std::string m = flags_error({"app", "--weft-log-level=loud"});
  EXPECT_TRUE(has(m, "setting log_level (--weft-log-level=loud) must be one of error, warn,")) << m;
  EXPECT_TRUE(has(m, "trace, got 'loud'")) << m;
  Args a({"app", "--weft-transfer=MPI"});
  EXPECT_EQ(Config::from_env_and_args(&a.argc, &a.argv).get("transfer", "ucx"), "mpi");
  Config c;
  c.set("transfer", "rdma");
  const std::string t = config_error([&] { c.get("transfer", "ucx"); });
  EXPECT_TRUE(has(t,
                  "setting transfer (WEFT_TRANSFER or --weft-transfer) must be one of ucx or "
                  "mpi, got 'rdma'"))
      << t;
}

TEST(Config, ValuesOutsideTheirRangeAreRejectedAtLoad) {
  std::string m = flags_error({"app", "--weft-virtual-nodes=0"});
  EXPECT_TRUE(has(m, "setting virtual_nodes (--weft-virtual-nodes=0) must be between 1 and")) << m;
  m = flags_error({"app", "--weft-ring-bytes=1K"});
  EXPECT_TRUE(has(m, "setting ring_bytes (--weft-ring-bytes=1K) must be between 4K and 16G")) << m;
  m = flags_error({"app", "--weft-loop-spin-us=-1"});
  EXPECT_TRUE(has(m, "setting loop_spin_us (--weft-loop-spin-us=-1) must be at least 0")) << m;
}

TEST(Config, AFlagWithoutANameIsMalformed) {
  const std::string m = flags_error({"app", "--weft-=3"});
  EXPECT_TRUE(has(m, "malformed flag '--weft-=3'")) << m;
}

TEST(Config, SetRejectsUnknownNamesAndReadsCheckValues) {
  Config c;
  const std::string m = config_error([&] { c.set("workers", "many"); });
  EXPECT_TRUE(has(m, "unknown setting 'workers'")) << m;
  c.set("worker_threads", "many");
  const std::string w = config_error([&] { c.get_int("worker_threads", 4); });
  EXPECT_TRUE(has(w, "setting worker_threads (WEFT_WORKER_THREADS or --weft-worker-threads)")) << w;
  EXPECT_TRUE(has(w, "'many'")) << w;
}

TEST(Config, AnEmptyValueReadsAsTheDefaultExceptForStrings) {
  setenv("WEFT_VIRTUAL_NODES", "", 1);
  setenv("WEFT_LOG_LEVEL", "", 1);
  setenv("WEFT_NVLINK_DOMAIN", "", 1);
  Config c = Config::from_env();
  unsetenv("WEFT_VIRTUAL_NODES");
  unsetenv("WEFT_LOG_LEVEL");
  unsetenv("WEFT_NVLINK_DOMAIN");
  EXPECT_EQ(c.get_int("virtual_nodes", 1), 1);
  EXPECT_EQ(c.get("log_level", "warn"), "warn");
  EXPECT_TRUE(c.has("nvlink_domain"));  // its reader rejects an empty name
  EXPECT_EQ(c.get("nvlink_domain", "x"), "");
}

TEST(Config, ByteSizesAcceptTheUsualUnitSpellings) {
  const int64_t K = 1024, M = K * K, G = M * K, T = G * K;
  const std::pair<const char*, int64_t> cases[] = {{"4096", 4096},
                                                   {"4096B", 4096},
                                                   {"1K", K},
                                                   {"1KB", K},
                                                   {"1Ki", K},
                                                   {"1KiB", K},
                                                   {"1k", K},
                                                   {"1kib", K},
                                                   {"2M", 2 * M},
                                                   {"2MB", 2 * M},
                                                   {"2Mi", 2 * M},
                                                   {"2MiB", 2 * M},
                                                   {"1.5MiB", 3 * M / 2},
                                                   {"3G", 3 * G},
                                                   {"3GB", 3 * G},
                                                   {"3Gi", 3 * G},
                                                   {"3GiB", 3 * G},
                                                   {"1T", T},
                                                   {"1TB", T},
                                                   {"1Ti", T},
                                                   {"1TiB", T},
                                                   {"64 K", 64 * K},
                                                   {".5K", K / 2}};
  for (const auto& [text, want] : cases) {
    EXPECT_EQ(Config::parse_bytes(text, "setting x"), want) << text;
  }
  for (const char* bad :
       {"-1", "10Q", "1KK", "K", "", "1iB", "0x10", "inf", "nan", "1P", "1e30T"}) {
    const std::string m = config_error([&] { Config::parse_bytes(bad, "setting x"); });
    EXPECT_TRUE(has(m, "setting x expects a byte size")) << "'" << bad << "': " << m;
  }
}

TEST(Settings, EditDistanceCountsTranspositionsAsOne) {
  EXPECT_EQ(edit_distance("virtual_node", "virtual_nodes"), 1u);
  EXPECT_EQ(edit_distance("inlien", "inline"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_FALSE(closest_setting("bogus").has_value());
  EXPECT_EQ(closest_setting("log-levl").value_or(""), "log_level");
}

TEST(Settings, DeclaredDefaultsParseAsTheirKind) {
  std::set<std::string_view> names;
  for (const Setting& s : all_settings()) {
    EXPECT_TRUE(names.insert(s.name).second) << "declared twice: " << s.name;
    EXPECT_FALSE(s.doc.empty()) << s.name;
    EXPECT_TRUE(!s.default_value.empty() || !s.default_doc.empty()) << s.name;
    if (s.default_value.empty()) continue;
    // Loading checks the kind and the range, as for a user's value.
    std::string env = "WEFT_" + std::string(s.name);
    for (char& ch : env) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    setenv(env.c_str(), std::string(s.default_value).c_str(), 1);
    EXPECT_EQ(config_error([] { Config::from_env(); }), "") << s.name;
    unsetenv(env.c_str());
    if (s.kind == SettingKind::kEnum) {
      EXPECT_FALSE(s.allowed.empty()) << s.name;
    }
  }
}

// docs/operations.md documents exactly the declared settings: each has a row `| \`name\` |` in
// the Configuration section, and every such row names a declared setting.
TEST(Settings, OperationsDocListsExactlyTheDeclaredSettings) {
  std::ifstream in(WEFT_SOURCE_DIR "/docs/operations.md");
  ASSERT_TRUE(in) << "cannot read docs/operations.md";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const size_t from = doc.find("## Configuration");
  const size_t to = doc.find("\n## ", from + 1);
  ASSERT_NE(from, std::string::npos);
  const std::string section = doc.substr(from, to - from);
  std::set<std::string> documented;
  const std::regex row(R"(\n\| `([a-z_]+)` \|)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), row);
       it != std::sregex_iterator(); ++it) {
    documented.insert((*it)[1]);
  }
  std::set<std::string> declared;
  for (const Setting& s : all_settings()) declared.insert(std::string(s.name));
  for (const std::string& d : documented) EXPECT_TRUE(declared.count(d)) << "documented: " << d;
  for (const std::string& d : declared) EXPECT_TRUE(documented.count(d)) << "undocumented: " << d;
}

}  // namespace
}  // namespace weft
