// The registration tables on their own (no MPI, no runtime): which second registrations are
// harmless, which are collisions, and that a collision names both sides. Ids are chosen by the
// test, so a 64-bit hash collision can be pinned down without finding one.
#include "core/registry_table.hpp"

#include <gtest/gtest.h>

namespace weft::detail {
namespace {

FunctionEntry fn(uint64_t id, std::string name, std::string symbol, std::string site) {
  FunctionEntry e;
  e.id = id;
  e.name = std::move(name);
  e.symbol = std::move(symbol);
  e.site = std::move(site);
  return e;
}

ClassEntry cls(uint64_t id, std::string name, std::string symbol, std::string site) {
  ClassEntry e;
  e.id = id;
  e.name = std::move(name);
  e.symbol = std::move(symbol);
  e.site = std::move(site);
  return e;
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(RegistryTable, OneNameForTwoFunctionsIsAConflictNamingBoth) {
  RegistryTable t;
  t.add_function(fn(7, "scale", "int alpha::scale(int)", "a.cpp:3"), "key-a");
  t.add_function(fn(7, "scale", "int beta::scale(int)", "b.cpp:9"), "key-b");
  ASSERT_EQ(t.conflicts().size(), 1u);
  const std::string& c = t.conflicts()[0];
  EXPECT_TRUE(has(c, "'scale'")) << c;
  EXPECT_TRUE(has(c, "int alpha::scale(int)")) << c;
  EXPECT_TRUE(has(c, "a.cpp:3")) << c;
  EXPECT_TRUE(has(c, "int beta::scale(int)")) << c;
  EXPECT_TRUE(has(c, "b.cpp:9")) << c;
  EXPECT_EQ(t.function(7)->symbol, "int alpha::scale(int)");  // the first one stays
  EXPECT_EQ(t.function_by_key("key-b")->id, 7u);
}

TEST(RegistryTable, TwoNamesWithOneIdIsAConflictNamingBoth) {
  RegistryTable t;
  t.add_function(fn(42, "left", "int left(int)", "a.cpp:1"), "key-l");
  t.add_function(fn(42, "right", "int right(int)", "b.cpp:2"), "key-r");
  ASSERT_EQ(t.conflicts().size(), 1u);
  const std::string& c = t.conflicts()[0];
  EXPECT_TRUE(has(c, "hash to the same id")) << c;
  EXPECT_TRUE(has(c, "int left(int)")) << c;
  EXPECT_TRUE(has(c, "int right(int)")) << c;
  EXPECT_EQ(t.function(42)->name, "left");
}

TEST(RegistryTable, TheSameFunctionRegisteredTwiceIsNoConflict) {
  RegistryTable t;
  t.add_function(fn(1, "f", "int f(int)", "a.cpp:1"), "key");
  t.add_function(fn(1, "f", "int f(int)", "b.cpp:5"), "key");
  EXPECT_TRUE(t.conflicts().empty());
}

TEST(RegistryTable, OneDefinitionCompiledIntoSeveralUnitsIsNoConflict) {
  // A WEFT_REMOTE in a header over a function with internal linkage: one copy per translation
  // unit (different pointers), one source line.
  RegistryTable t;
  t.add_function(fn(1, "f", "int f(int)", "util.hpp:8"), "copy-1");
  t.add_function(fn(1, "f", "int f(int)", "util.hpp:8"), "copy-2");
  EXPECT_TRUE(t.conflicts().empty());
  EXPECT_EQ(t.function_by_key("copy-2")->id, 1u);
}

TEST(RegistryTable, TwoFunctionsWithoutAKnownSourceStillConflict) {
  RegistryTable t;
  t.add_function(fn(1, "f", "", ""), "k1");
  t.add_function(fn(1, "f", "", ""), "k2");
  EXPECT_EQ(t.conflicts().size(), 1u);
}

TEST(RegistryTable, OneFunctionUnderTwoNamesKeepsItsFirstId) {
  RegistryTable t;
  t.add_function(fn(1, "f", "int ns::f(int)", "a.cpp:1"), "key");
  t.add_function(fn(2, "ns::f", "int ns::f(int)", "a.cpp:2"), "key");
  EXPECT_TRUE(t.conflicts().empty());
  EXPECT_EQ(t.function_by_key("key")->id, 1u);
  EXPECT_NE(t.function(2), nullptr);
}

TEST(RegistryTable, OneNameForTwoActorClassesIsAConflictNamingBoth) {
  RegistryTable t;
  t.add_class(cls(5, "Counter", "(anonymous namespace)::Counter", "a.cpp:20"), "ctor-a");
  t.add_class(cls(5, "Counter", "(anonymous namespace)::Counter", "b.cpp:31"), "ctor-b");
  ASSERT_EQ(t.conflicts().size(), 1u);
  const std::string& c = t.conflicts()[0];
  EXPECT_TRUE(has(c, "'Counter'")) << c;
  EXPECT_TRUE(has(c, "a.cpp:20")) << c;
  EXPECT_TRUE(has(c, "b.cpp:31")) << c;
  EXPECT_TRUE(has(c, "WEFT_ACTOR(Counter)")) << c;
}

TEST(RegistryTable, TwoClassNamesWithOneIdIsAConflict) {
  RegistryTable t;
  t.add_class(cls(5, "A", "A", "a.cpp:1"), "ctor-a");
  t.add_class(cls(5, "B", "B", "b.cpp:1"), "ctor-b");
  ASSERT_EQ(t.conflicts().size(), 1u);
  EXPECT_TRUE(has(t.conflicts()[0], "hash to the same id")) << t.conflicts()[0];
  EXPECT_EQ(t.actor_class(5)->name, "A");
}

TEST(RegistryTable, TheSameClassRegisteredTwiceIsNoConflict) {
  RegistryTable t;
  t.add_class(cls(5, "A", "A", "a.cpp:1"), "ctor");
  t.add_class(cls(5, "A", "A", "b.cpp:1"), "ctor");
  EXPECT_TRUE(t.conflicts().empty());
}

TEST(FunctionSymbol, SplicesTheTemplateArgumentIntoThePointerType) {
  // GCC
  EXPECT_EQ(function_symbol("R<F>::R() [with auto F = alpha::scale]", "int (*)(int)"),
            "int alpha::scale(int)");
  EXPECT_EQ(function_symbol("R<F>::R() [with auto F = {anonymous}::f; T = int]", "void (*)()"),
            "void (anonymous namespace)::f()");
  EXPECT_EQ(function_symbol("R<F>::R() [with auto F = &{anonymous}::Counter::incr]",
                            "int ((anonymous namespace)::Counter::*)(int)"),
            "int (anonymous namespace)::Counter::incr(int)");
  EXPECT_EQ(function_symbol("R<F>::R() [with auto F = alpha::tw<std::pair<int, int> >]",
                            "int (*)(std::pair<int, int>)"),
            "int alpha::tw<std::pair<int, int> >(std::pair<int, int>)");
  // Clang
  EXPECT_EQ(function_symbol("R<&add>::R() [F = &add]", "int (*)(int, int)"), "int add(int, int)");
  // Shapes it does not know: say what can be said.
  EXPECT_EQ(function_symbol("", "int (*)(int)"), "int (*)(int)");
  EXPECT_EQ(function_symbol("[with auto F = f]", "odd"), "f [odd]");
}

}  // namespace
}  // namespace weft::detail
