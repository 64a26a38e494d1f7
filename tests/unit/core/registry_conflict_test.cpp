// Collisions between registrations of one program (this file and registry_conflict_other.cpp
// register different things under the same names) are found at registration and stop the
// runtime from starting, naming both sides; no MPI is needed since the check runs first.
#include <gtest/gtest.h>

#include <weft/weft.hpp>

namespace alpha {
int scale(int x) { return 2 * x; }
WEFT_REMOTE(scale);
}  // namespace alpha

namespace gamma_ns {
int same(int x) { return x; }
WEFT_REMOTE(same);
WEFT_REMOTE(same);  // the same function twice: harmless
}  // namespace gamma_ns

namespace {
struct Counter {
  explicit Counter(int start) : n(start) {}
  int n;
};
struct Local {
  int method(int x) { return x; }
};
int unregistered_here(int x) { return x + 1; }
}  // namespace
WEFT_ACTOR(Counter, int);

namespace weft::detail {
namespace {

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string conflict_naming(const std::string& what) {
  for (const std::string& c : registration_conflicts())
    if (has(c, what)) return c;
  return "";
}

TEST(RegistryConflicts, OneNameInTwoNamespacesIsReportedWithBothSymbolsAndSites) {
  const std::string c = conflict_naming("'scale'");
  ASSERT_FALSE(c.empty());
  EXPECT_TRUE(has(c, "int alpha::scale(int)")) << c;
  EXPECT_TRUE(has(c, "int beta::scale(int)")) << c;
  EXPECT_TRUE(has(c, "registry_conflict_test.cpp:")) << c;
  EXPECT_TRUE(has(c, "registry_conflict_other.cpp:")) << c;
}

TEST(RegistryConflicts, TwoFileLocalActorClassesWithOneNameAreReported) {
  const std::string c = conflict_naming("'Counter'");
  ASSERT_FALSE(c.empty());
  EXPECT_TRUE(has(c, "(anonymous namespace)::Counter")) << c;
  EXPECT_TRUE(has(c, "registry_conflict_test.cpp:")) << c;
  EXPECT_TRUE(has(c, "registry_conflict_other.cpp:")) << c;
}

TEST(RegistryConflicts, RegisteringOneFunctionTwiceIsNoConflict) {
  EXPECT_EQ(conflict_naming("same"), "");
  EXPECT_EQ(registration_conflicts().size(), 2u);
}

TEST(RegistryConflicts, TheRuntimeRefusesToStartNamingBothSides) {
  int argc = 1;
  char name[] = "weft_registry_tests";
  char* args[] = {name, nullptr};
  char** argv = args;
  try {
    weft::Runtime rt(&argc, &argv);
    FAIL() << "the runtime started despite colliding registrations";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(has(m, "int alpha::scale(int)")) << m;
    EXPECT_TRUE(has(m, "int beta::scale(int)")) << m;
    EXPECT_TRUE(has(m, "'Counter'")) << m;
  }
  // weft::run takes the same path.
  EXPECT_THROW(weft::run(argc, argv, [] { return 0; }), ConfigError);
}

TEST(RegistryConflicts, AnUnregisteredFunctionIsNamedBySymbol) {
  try {
    function_id_of(&unregistered_here);
    FAIL() << "an unregistered function got an id";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_TRUE(has(m, "unregistered_here(int)")) << m;
    EXPECT_TRUE(has(m, "WEFT_REMOTE(unregistered_here)")) << m;
  }
  try {
    function_id_of(&Local::method);
    FAIL() << "an unregistered method got an id";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_TRUE(has(m, "Local::method(int)")) << m;
    EXPECT_TRUE(has(m, "WEFT_REMOTE(&Local::method)")) << m;
  }
}

TEST(RegistryConflicts, AnUnregisteredActorClassIsNamed) {
  try {
    throw_class_not_registered(typeid(Local));
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(has(e.what(), "(anonymous namespace)::Local")) << e.what();
    EXPECT_TRUE(has(e.what(), "WEFT_ACTOR(Local,")) << e.what();
  }
}

TEST(RegistryConflicts, DescribeFunctionNamesTheRegistration) {
  const std::string d = describe_function(function_id_of(&gamma_ns::same));
  EXPECT_TRUE(has(d, "int gamma_ns::same(int)")) << d;
  EXPECT_TRUE(has(d, "WEFT_REMOTE(same)")) << d;
  EXPECT_TRUE(has(describe_function(12345), "function id 0x")) << describe_function(12345);
}

}  // namespace
}  // namespace weft::detail
