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
}  // namespace
WEFT_REMOTE(add);
WEFT_REMOTE(join);

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
