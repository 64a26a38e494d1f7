// Argument blocks (include/weft/detail/arg_block.hpp: ArgReader) and their decoding by a
// registered function's invoker (registry.hpp: decode_args through arg_bytes, serde for
// by-value parameters, view_arg for View<E> / std::span<const E>), as the executor runs a task
// body, an actor method or an actor constructor (registry.cpp, without a runtime: the
// tests/unit/core/arg_block_test.cpp way). Input:
//   u8 callee, u8 pin count, per pin [u32 n][n bytes] (the stored values kStored entries name,
//   as the executor pins them), then the argument block.
// The bodies read every element of what they were given, as user code would.
#include <boost/serialization/access.hpp>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>
#include <weft/weft.hpp>

#include "fuzz_harness.hpp"

namespace fz {

int add(int a, int b) { return int(unsigned(a) + unsigned(b)); }
double sum_vec(std::vector<double> v) { return std::accumulate(v.begin(), v.end(), 0.0); }
size_t count_map(std::map<std::string, std::vector<int>> m) {
  size_t n = 0;
  for (const auto& [k, v] : m) n += k.size() + v.size();
  return n;
}
double sum_view(weft::View<double> v) { return std::accumulate(v.begin(), v.end(), 0.0); }
int64_t sum_span(std::span<const int> s, int bias) {
  return std::accumulate(s.begin(), s.end(), int64_t{0}) + bias;
}
std::string concat(std::string a, std::optional<std::string> b, std::tuple<int, char> c) {
  return a + b.value_or("-") + std::to_string(std::get<0>(c)) + std::get<1>(c);
}
size_t text_len(std::span<const char> s) { return std::string(s.begin(), s.end()).size(); }

struct Point {  // a user type: the Boost path inside an argument
  std::string label;
  std::vector<double> xs;
  template <class A>
  void serialize(A& ar, unsigned) {
    ar & label & xs;
  }
};
size_t point_size(Point p, std::vector<Point> more) { return p.xs.size() + more.size(); }

class Counter {
 public:
  Counter(int start, std::string name) : n_(start), name_(std::move(name)) {}
  int incr(int by) { return n_ = int(unsigned(n_) + unsigned(by)); }
  size_t rename(std::string name, std::vector<std::string> aliases) {
    name_ = std::move(name);
    return name_.size() + aliases.size();
  }

 private:
  int n_;
  std::string name_;
};

}  // namespace fz

WEFT_REMOTE(fz::add);
WEFT_REMOTE(fz::sum_vec);
WEFT_REMOTE(fz::count_map);
WEFT_REMOTE(fz::sum_view);
WEFT_REMOTE(fz::sum_span);
WEFT_REMOTE(fz::concat);
WEFT_REMOTE(fz::text_len);
WEFT_REMOTE(fz::point_size);
WEFT_ACTOR(fz::Counter, int, std::string);
WEFT_REMOTE(&fz::Counter::incr);
WEFT_REMOTE(&fz::Counter::rename);

namespace {

using namespace weft;
using namespace weft::detail;

// The callees, in selector order: free functions, methods (called on one Counter), and the
// Counter's constructor last.
std::vector<uint64_t> function_ids() {
  return {function_id_of(&fz::add),        function_id_of(&fz::sum_vec),
          function_id_of(&fz::count_map),  function_id_of(&fz::sum_view),
          function_id_of(&fz::sum_span),   function_id_of(&fz::concat),
          function_id_of(&fz::text_len),   function_id_of(&fz::point_size),
          function_id_of(&fz::Counter::incr), function_id_of(&fz::Counter::rename)};
}
constexpr size_t kConstructor = 10, kNumCallees = 11;

class ByteCursor {
 public:
  ByteCursor(const char* p, size_t n) : p_(p), n_(n) {}
  size_t left() const { return n_; }
  const char* at() const { return p_; }
  bool get(void* out, size_t k) {
    if (n_ < k) return false;
    std::memcpy(out, p_, k);
    p_ += k, n_ -= k;
    return true;
  }
  const char* take(size_t k) {
    const char* a = p_;
    p_ += k, n_ -= k;
    return a;
  }

 private:
  const char* p_;
  size_t n_;
};

void decode(const uint8_t* data, size_t size) {
  static const std::vector<uint64_t> ids = function_ids();
  ByteCursor in(reinterpret_cast<const char*>(data), size);
  uint8_t callee = 0, npins = 0;
  if (!in.get(&callee, 1) || !in.get(&npins, 1)) return;
  std::vector<std::shared_ptr<const Payload>> pins;
  for (int i = 0; i < npins % 4; ++i) {
    uint32_t n = 0;
    if (!in.get(&n, sizeof n)) return;
    n = std::min<uint32_t>(n, static_cast<uint32_t>(in.left()));
    // Each pin in memory of its own, like a store object: ASan sees reads past it.
    pins.push_back(std::make_shared<InlinePayload>(std::vector<char>(in.take(n), in.at())));
  }
  // The block in memory of exactly its size (ExecItem::args is a vector of its own).
  const std::vector<char> block(in.at(), in.at() + in.left());
  const CallArgs args{block.data(), block.size(), pins.data(), pins.size()};
  serde::Buffer out;
  const size_t which = callee % kNumCallees;
  if (which == kConstructor) {
    const ClassEntry* c = find_class(ActorClass<fz::Counter>::id);
    WEFT_FUZZ_CHECK(c != nullptr);
    std::shared_ptr<void> actor = c->construct(args);
    WEFT_FUZZ_CHECK(actor != nullptr);
    return;
  }
  const FunctionEntry* f = find_function(ids[which]);
  WEFT_FUZZ_CHECK(f != nullptr);
  fz::Counter counter(1, "c");
  f->invoke(f->is_method ? &counter : nullptr, args, out);
}

// ---- seeds: encode_args, the caller's encoder (call_args.hpp), and ArgWriter for stored ----

template <class Params, class... A>
std::vector<char> block_of(A&&... a) {
  EncodedArgs e = encode_args<Params>(std::forward<A>(a)...);
  return std::vector<char>(e.bytes.data(), e.bytes.data() + e.bytes.size());
}

template <class F>
size_t index_of(F f) {
  const uint64_t id = function_id_of(f);
  const std::vector<uint64_t> ids = function_ids();
  return static_cast<size_t>(std::find(ids.begin(), ids.end(), id) - ids.begin());
}

fuzz::Seed seed(const std::string& name, size_t callee, const std::vector<char>& block,
                const std::vector<std::vector<char>>& pins = {}) {
  std::vector<char> b{static_cast<char>(callee), static_cast<char>(pins.size())};
  for (const auto& p : pins) {
    const uint32_t n = static_cast<uint32_t>(p.size());
    b.insert(b.end(), reinterpret_cast<const char*>(&n), reinterpret_cast<const char*>(&n) + 4);
    b.insert(b.end(), p.begin(), p.end());
  }
  b.insert(b.end(), block.begin(), block.end());
  return {name, std::move(b)};
}

std::vector<char> stored_block(int n) {
  serde::Buffer b;
  ArgWriter w(b);
  for (int i = 0; i < n; ++i) w.stored(StoredArg{ObjectId{1, 0, uint64_t(50 + i)}, 2, 0});
  return std::vector<char>(b.data(), b.data() + b.size());
}

std::vector<fuzz::Seed> seeds() {
  using Strings = std::vector<std::string>;
  const std::vector<double> xs{1.5, 2.5, 4};
  fz::Point p{"p", {1, 2}};
  return {
      seed("add", index_of(&fz::add), block_of<std::tuple<int, int>>(2, 3)),
      seed("sum_vec_inline", index_of(&fz::sum_vec), block_of<std::tuple<std::vector<double>>>(xs)),
      seed("sum_vec_stored", index_of(&fz::sum_vec), stored_block(1), {serde::to_bytes(xs)}),
      seed("count_map", index_of(&fz::count_map),
           block_of<std::tuple<std::map<std::string, std::vector<int>>>>(
               std::map<std::string, std::vector<int>>{{"a", {1, 2}}, {"b", {}}})),
      seed("sum_view_stored", index_of(&fz::sum_view), stored_block(1), {serde::to_bytes(xs)}),
      seed("sum_span_inline", index_of(&fz::sum_span),
           block_of<std::tuple<std::span<const int>, int>>(std::vector<int>{1, 2, 3}, 10)),
      seed("sum_span_stored", index_of(&fz::sum_span),
           [] {
             serde::Buffer b;
             ArgWriter w(b);
             w.stored(StoredArg{ObjectId{1, 0, 7}, 0, 0});
             const std::vector<char> bias = serde::to_bytes(5);
             w.inline_value(bias.data(), bias.size());
             return std::vector<char>(b.data(), b.data() + b.size());
           }(),
           {serde::to_bytes(std::vector<int>{4, 5, 6})}),
      seed("concat", index_of(&fz::concat),
           block_of<std::tuple<std::string, std::optional<std::string>, std::tuple<int, char>>>(
               std::string("a"), std::optional<std::string>("b"), std::tuple<int, char>{3, 'c'})),
      seed("text_len", index_of(&fz::text_len),
           block_of<std::tuple<std::span<const char>>>(std::string("some text"))),
      seed("point_size", index_of(&fz::point_size),
           block_of<std::tuple<fz::Point, std::vector<fz::Point>>>(p, std::vector<fz::Point>{p, p})),
      seed("counter_incr", index_of(&fz::Counter::incr), block_of<std::tuple<int>>(4)),
      seed("counter_rename", index_of(&fz::Counter::rename),
           block_of<std::tuple<std::string, Strings>>(std::string("n"), Strings{"x", "y"})),
      seed("counter_constructor", kConstructor,
           block_of<std::tuple<int, std::string>>(7, std::string("seven"))),
  };
}

}  // namespace

WEFT_FUZZ_TARGET(seeds, decode)
