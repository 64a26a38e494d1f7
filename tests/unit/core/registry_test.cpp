// Registration and argument decoding, without a running runtime.
#include <gtest/gtest.h>
#include <weft/weft.hpp>

namespace {
int add(int a, int b) { return a + b; }
std::string join(std::vector<std::string> v, std::string sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}
int unregistered(int x) { return x; }
// More functions than a thread's lookup cache has slots (registry.cpp), so that some share one.
template <int N>
int plus(int x) {
  return x + N;
}
struct Acc {
  int one(int x) { return x + 1; }
  int two(int x) { return x + 2; }
};
}  // namespace
WEFT_REMOTE(add);
WEFT_REMOTE(join);
WEFT_REMOTE(plus<0>);
WEFT_REMOTE(plus<1>);
WEFT_REMOTE(plus<2>);
WEFT_REMOTE(plus<3>);
WEFT_REMOTE(plus<4>);
WEFT_REMOTE(plus<5>);
WEFT_REMOTE(plus<6>);
WEFT_REMOTE(plus<7>);
WEFT_REMOTE(plus<8>);
WEFT_REMOTE(plus<9>);
WEFT_REMOTE(&Acc::one);
WEFT_REMOTE(&Acc::two);

namespace weft::detail {

template <class Params, class... A>
std::vector<char> args_of(A&&... a) {
  auto e = encode_args<Params>(std::forward<A>(a)...);
  return e.bytes.take();
}

TEST(Registry, FunctionsAreFoundByPointerAndIdAndRunFromEncodedArgs) {
  uint64_t id = function_id_of(&add);
  const FunctionEntry* e = find_function(id);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->name.find("add"), std::string::npos);
  auto args = args_of<std::tuple<int, int>>(20, 22);
  serde::Buffer out;
  e->invoke(nullptr, CallArgs{args.data(), args.size()}, out);
  EXPECT_EQ(serde::from_bytes<int>(out.data(), out.size()), 42);
}

TEST(Registry, EachFunctionGetsItsOwnIdHoweverLookupsInterleave) {
  // Lookups by pointer are cached per thread (registry.cpp): whatever the order, and with more
  // functions than slots, each pointer keeps its own entry, and an unregistered one stays one.
  using Fn = int (*)(int);
  const Fn fns[] = {&plus<0>, &plus<1>, &plus<2>, &plus<3>, &plus<4>,
                    &plus<5>, &plus<6>, &plus<7>, &plus<8>, &plus<9>};
  std::vector<uint64_t> ids;
  for (Fn f : fns) ids.push_back(function_id_of(f));
  const uint64_t one = function_id_of(&Acc::one), two = function_id_of(&Acc::two);
  EXPECT_NE(one, two);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_NE(ids[i], one);
    for (size_t j = i + 1; j < ids.size(); ++j) EXPECT_NE(ids[i], ids[j]) << i << " " << j;
  }
  for (int round = 0; round < 4; ++round) {
    for (size_t k = 0; k < ids.size(); ++k) {
      const size_t i = round % 2 ? ids.size() - 1 - k : (k * 7 + round) % ids.size();
      ASSERT_EQ(function_id_of(fns[i]), ids[i]) << "plus<" << i << "> in round " << round;
      const FunctionEntry* e = find_function(ids[i]);
      ASSERT_NE(e, nullptr);
      EXPECT_NE(e->name.find("plus<" + std::to_string(i) + ">"), std::string::npos) << e->name;
      EXPECT_EQ(function_id_of(&Acc::one), one);
      EXPECT_EQ(function_id_of(&Acc::two), two);
      EXPECT_THROW(function_id_of(&unregistered), Error);
    }
  }
}

TEST(Registry, UnregisteredFunctionIsAClearError) {
  try {
    function_id_of(&unregistered);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("WEFT_REMOTE"), std::string::npos);
  }
}

TEST(Registry, CorruptArgumentsNameTheArgument) {
  const FunctionEntry* e = find_function(function_id_of(&join));
  auto args = args_of<std::tuple<std::vector<std::string>, std::string>>(
      std::vector<std::string>{"a", "b"}, std::string(","));
  serde::Buffer out;
  e->invoke(nullptr, CallArgs{args.data(), args.size()}, out);
  EXPECT_EQ(serde::from_bytes<std::string>(out.data(), out.size()), "a,b");
  // Truncate inside the second argument.
  try {
    e->invoke(nullptr, CallArgs{args.data(), args.size() - 1}, out);
    FAIL();
  } catch (const SerializationError& err) {
    EXPECT_NE(std::string(err.what()).find("argument 1"), std::string::npos) << err.what();
  }
  // A length that lies about the first argument.
  auto bad = args;
  bad[1] = static_cast<char>(0x7f);
  EXPECT_THROW(e->invoke(nullptr, CallArgs{bad.data(), bad.size()}, out), SerializationError);
}

TEST(Registry, NamesHashStably) {
  EXPECT_EQ(hash_name("add"), hash_name("add"));
  EXPECT_NE(hash_name("add"), hash_name("adD"));
}

}  // namespace weft::detail
