// User types with serialize() (the Boost path: detail/serde_archive.hpp, detail/serde_std.hpp,
// src/serde/archive.cpp's guarded IArchive): members of every standard kind, a base class, a
// class version, a free serialize, a recursive type, owning pointers. Input: one byte choosing
// the type, then the encoded value. A value that decodes must re-encode to bytes that decode and
// re-encode to the same bytes.
#include <boost/serialization/base_object.hpp>
#include <boost/serialization/shared_ptr.hpp>
#include <boost/serialization/unique_ptr.hpp>
#include <boost/serialization/version.hpp>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "fuzz_harness.hpp"
#include "weft/serialization.hpp"

namespace fz {

struct Vec3 {  // raw: travels as its bytes inside the archive
  double x = 0, y = 0, z = 0;
};

struct Particle {
  std::string name;
  Vec3 pos;
  std::vector<double> history;
  std::map<std::string, int32_t> tags;
  std::optional<std::string> note;
  template <class A>
  void serialize(A& ar, unsigned) {
    ar & name & pos & history & tags & note;
  }
};

struct Base {
  int64_t id = 0;
  std::string label;
  template <class A>
  void serialize(A& ar, unsigned) {
    ar & id & label;
  }
};

struct Derived : Base {
  std::vector<Particle> particles;
  std::variant<int32_t, std::string, Vec3> choice;
  std::list<std::string> names;
  std::deque<int16_t> queue;
  std::vector<bool> flags;
  std::tuple<int32_t, std::string> pair;
  std::unordered_map<std::string, Particle> by_name;  // one entry at most in seeds: order-free
  template <class A>
  void serialize(A& ar, unsigned) {
    ar & boost::serialization::base_object<Base>(*this);
    ar & particles & choice & names & queue & flags & pair & by_name;
  }
};

struct Versioned {
  int32_t a = 0;
  std::string b;    // since version 1
  std::vector<int32_t> c;  // since version 2
  template <class A>
  void serialize(A& ar, unsigned version) {
    ar & a;
    if (version >= 1) ar & b;
    if (version >= 2) ar & c;
  }
};

struct FreeSerialized {  // serialize as a free function (found by Boost's rules)
  std::string key;
  std::map<int32_t, std::vector<std::string>> table;
};
template <class A>
void serialize(A& ar, FreeSerialized& f, unsigned) {
  ar & f.key & f.table;
}

struct Tree {  // recursive: depth comes from the bytes
  std::string label;
  std::vector<Tree> children;
  template <class A>
  void serialize(A& ar, unsigned) {
    ar & label & children;
  }
};

struct Owning {  // owning pointers, loaded by Boost (new objects, tracked)
  std::unique_ptr<Particle> first;
  std::shared_ptr<Base> shared;
  std::shared_ptr<Base> alias;  // the same object as `shared` in the seeds
  template <class A>
  void serialize(A& ar, unsigned) {
    ar & first & shared & alias;
  }
};

}  // namespace fz

BOOST_CLASS_VERSION(fz::Versioned, 2)

namespace {

using namespace weft;

// An unordered_map's entries are encoded in its iteration order, which depends on the order
// they were inserted in: decoding and encoding again may permute them (a fuzzed Derived can hold
// several), so there the check is on the size of the bytes.
template <class T>
constexpr bool kHasUnorderedMember =
    std::is_same_v<T, fz::Derived> || std::is_same_v<T, std::map<std::string, fz::Derived>>;

template <class T>
void roundtrip(const char* p, size_t n) {
  const T v = serde::from_bytes<T>(p, n);
  const std::vector<char> b1 = serde::to_bytes(v);
  const T v2 = serde::from_bytes<T>(b1);  // must not throw: these are the encoder's bytes
  const std::vector<char> b2 = serde::to_bytes(v2);
  if constexpr (kHasUnorderedMember<T>)
    WEFT_FUZZ_CHECK(b2.size() == b1.size());
  else
    WEFT_FUZZ_CHECK(b2 == b1);
}

using Cases = std::tuple<fz::Particle, fz::Derived, fz::Versioned, fz::FreeSerialized, fz::Tree,
                         fz::Owning, std::vector<fz::Particle>, std::map<std::string, fz::Derived>,
                         std::optional<fz::Tree>, std::pair<fz::Versioned, fz::Vec3>>;
constexpr size_t kNumCases = std::tuple_size_v<Cases>;

void decode(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const size_t which = data[0] % kNumCases;
  const char* p = reinterpret_cast<const char*>(data + 1);
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((which == I ? roundtrip<std::tuple_element_t<I, Cases>>(p, size - 1) : void()), ...);
  }(std::make_index_sequence<kNumCases>{});
}

template <class T, size_t I = 0>
constexpr size_t index_of() {
  if constexpr (I == kNumCases) {
    static_assert(I < kNumCases, "a seed of a type the target does not decode");
    return I;
  } else if constexpr (std::is_same_v<std::tuple_element_t<I, Cases>, T>) {
    return I;
  } else {
    return index_of<T, I + 1>();
  }
}

template <class T>
fuzz::Seed seed(const std::string& name, const T& v) {
  std::vector<char> b{static_cast<char>(index_of<T>())};
  const std::vector<char> body = serde::to_bytes(v);
  b.insert(b.end(), body.begin(), body.end());
  return {name, std::move(b)};
}

fz::Particle particle(const std::string& name) {
  fz::Particle p;
  p.name = name;
  p.pos = {1, 2, 3};
  p.history = {0.5, 0.25};
  p.tags = {{"mass", 3}, {"spin", -1}};
  p.note = "n-" + name;
  return p;
}

std::vector<fuzz::Seed> seeds() {
  fz::Derived d;
  d.id = 42;
  d.label = "derived";
  d.particles = {particle("a"), particle("b")};
  d.choice = fz::Vec3{4, 5, 6};
  d.names = {"x", "y"};
  d.queue = {1, -2, 3};
  d.flags = {true, false, true};
  d.pair = {9, "nine"};
  d.by_name = {{"only", particle("only")}};
  fz::Derived d2 = d;
  d2.choice = std::string("text");
  d2.particles.clear();

  fz::Tree tree{"root", {{"a", {{"a1", {}}, {"a2", {}}}}, {"b", {}}}};
  fz::Tree deep{"0", {}};
  for (int i = 1; i < 20; ++i) deep = fz::Tree{std::to_string(i), {deep}};

  fz::Owning owning;
  owning.first = std::make_unique<fz::Particle>(particle("owned"));
  owning.shared = std::make_shared<fz::Base>(fz::Base{7, "shared"});
  owning.alias = owning.shared;
  fz::Owning empty_owning;

  return {
      seed("particle", particle("p")),
      seed("derived_vec3", d),
      seed("derived_string", d2),
      seed("versioned", fz::Versioned{5, "five", {1, 2}}),
      seed("free_serialized", fz::FreeSerialized{"k", {{1, {"a", "b"}}, {2, {}}}}),
      seed("tree", tree),
      seed("tree_deep", deep),
      seed("owning", owning),
      seed("owning_null", empty_owning),
      seed("vector_particle", std::vector<fz::Particle>{particle("v1"), particle("v2")}),
      seed("map_derived", std::map<std::string, fz::Derived>{{"d", d}, {"e", d2}}),
      seed("optional_tree", std::optional<fz::Tree>{tree}),
      seed("pair_versioned_vec3", std::pair<fz::Versioned, fz::Vec3>{{1, "b", {}}, {7, 8, 9}}),
  };
}

}  // namespace

WEFT_FUZZ_TARGET(seeds, decode)
