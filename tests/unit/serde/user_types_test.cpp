// User types: intrusive and non-intrusive serialize, private serialize, types whose serialize
// must run for every element (like the runtime's ObjectRef), pointers through Boost.
#include <gtest/gtest.h>

#include <boost/serialization/export.hpp>
#include <boost/serialization/shared_ptr.hpp>
#include <boost/serialization/split_member.hpp>
#include <boost/serialization/unique_ptr.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "weft/serialization.hpp"

namespace user {

// Intrusive, public.
struct Particle {
  std::string name;
  std::vector<double> pos;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& name& pos;
  }
  bool operator==(const Particle&) const = default;
};

// Trivially copyable, but its serialize is private and has a side effect that must happen for
// every element, as ObjectRef's does (borrower registration): never memcpy'd.
class Handle {
 public:
  Handle() = default;
  explicit Handle(uint64_t id) : id_(id) {}
  uint64_t id() const { return id_; }
  static inline int saved = 0, loaded = 0;

 private:
  friend class boost::serialization::access;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& id_;
    if constexpr (Archive::is_saving::value) {
      ++saved;
    } else {
      ++loaded;
    }
  }
  uint64_t id_ = 0;
};

// Non-intrusive, free serialize in the type's namespace (found by ADL).
struct Vec3 {
  float x, y, z;
  bool operator==(const Vec3&) const = default;
};
struct Mesh {
  std::vector<Vec3> vertices;
  std::map<std::string, int> tags;
  bool operator==(const Mesh&) const = default;
};
template <class Archive>
void serialize(Archive& ar, Mesh& m, unsigned) {
  ar& m.vertices& m.tags;
}

// Split save/load with a version, and a final class.
class Versioned final {
 public:
  std::string text;
  int loaded_version = -1;
  template <class Archive>
  void save(Archive& ar, unsigned) const {
    ar << text;
  }
  template <class Archive>
  void load(Archive& ar, unsigned version) {
    ar >> text;
    loaded_version = static_cast<int>(version);
  }
  BOOST_SERIALIZATION_SPLIT_MEMBER()
};

// Polymorphic through a base pointer: needs BOOST_CLASS_EXPORT, works with weft's archives.
struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
  template <class Archive>
  void serialize(Archive&, unsigned) {}
};
struct Square : Shape {
  double side = 0;
  double area() const override { return side * side; }
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& boost::serialization::base_object<Shape>(*this);
    ar& side;
  }
};

}  // namespace user

BOOST_CLASS_VERSION(user::Versioned, 3)
BOOST_SERIALIZATION_ASSUME_ABSTRACT(user::Shape)
BOOST_CLASS_EXPORT(user::Square)

// Non-intrusive, free serialize in boost::serialization (the form Boost's manual shows).
namespace other {
struct Account {
  std::string owner;
  int64_t cents = 0;
  bool operator==(const Account&) const = default;
};
}  // namespace other
namespace boost::serialization {
template <class Archive>
void serialize(Archive& ar, other::Account& a, unsigned) {
  ar& a.owner& a.cents;
}
}  // namespace boost::serialization

namespace weft::serde {
namespace {

template <class T>
T round_trip(const T& v) {
  std::vector<char> bytes = to_bytes(v);
  return from_bytes<T>(bytes.data(), bytes.size());
}

TEST(SerdeUserTypes, IntrusiveMemberSerialize) {
  user::Particle p{"electron", {0.1, 0.2, 0.3}};
  EXPECT_EQ(round_trip(p), p);
  std::vector<user::Particle> ps{p, {"proton", {}}};
  EXPECT_EQ(round_trip(ps), ps);
}

TEST(SerdeUserTypes, PrivateSerializeMakesATypeNonRawAndRunsPerElement) {
  static_assert(std::is_trivially_copyable_v<user::Handle>);
  EXPECT_FALSE(is_raw_v<user::Handle>);
  std::vector<user::Handle> hs{user::Handle(1), user::Handle(2), user::Handle(3)};
  user::Handle::saved = user::Handle::loaded = 0;
  std::vector<user::Handle> back = round_trip(hs);
  EXPECT_EQ(user::Handle::saved, 3);
  EXPECT_EQ(user::Handle::loaded, 3);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[2].id(), 3u);
  user::Handle::saved = user::Handle::loaded = 0;
  round_trip(std::map<std::string, user::Handle>{{"a", user::Handle(9)}});
  EXPECT_EQ(user::Handle::loaded, 1);
}

TEST(SerdeUserTypes, FreeSerializeFoundByAdl) {
  user::Mesh m{{{1, 2, 3}, {4, 5, 6}}, {{"lod", 2}}};
  EXPECT_EQ(round_trip(m), m);
}

TEST(SerdeUserTypes, FreeSerializeInBoostNamespace) {
  other::Account a{"ada", 12345};
  EXPECT_EQ(round_trip(a), a);
  EXPECT_EQ(round_trip(std::vector<other::Account>{a, a}), (std::vector<other::Account>{a, a}));
}

TEST(SerdeUserTypes, SplitMemberSeesTheClassVersion) {
  EXPECT_FALSE(is_raw_v<user::Versioned>);
  user::Versioned v;
  v.text = "v3";
  user::Versioned back = round_trip(v);
  EXPECT_EQ(back.text, "v3");
  EXPECT_EQ(back.loaded_version, 3);
}

TEST(SerdeUserTypes, PolymorphicPointersAndSharedAliasing) {
  std::unique_ptr<user::Shape> s = std::make_unique<user::Square>();
  static_cast<user::Square&>(*s).side = 3;
  std::unique_ptr<user::Shape> back = round_trip(s);
  ASSERT_NE(back, nullptr);
  EXPECT_DOUBLE_EQ(back->area(), 9.0);

  auto shared = std::make_shared<user::Particle>(user::Particle{"same", {1}});
  std::vector<std::shared_ptr<user::Particle>> two{shared, shared};
  auto back2 = round_trip(two);
  ASSERT_EQ(back2.size(), 2u);
  EXPECT_EQ(back2[0]->name, "same");
  EXPECT_EQ(back2[0].get(), back2[1].get());  // Boost's tracking keeps the aliasing
}

// Executor threads encode and decode at the same time; Boost's registries are shared.
TEST(SerdeUserTypes, ConcurrentRoundTripsFromSeveralThreads) {
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ok] {
      for (int i = 0; i < 500; ++i) {
        std::map<std::string, user::Particle> m{{"p" + std::to_string(i), {"n", {1.0 * t, 2.0}}}};
        ok[t] += round_trip(m) == m;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, (std::vector<int>{500, 500, 500, 500}));
}

// The compile-time check of detail/serde_check.hpp sees every form above as serializable: a
// wrong "no" there would refuse valid code with its static_assert.
TEST(SerdeUserTypes, TheCompileTimeCheckSeesEveryFormOfSerialize) {
  using detail::serializable_v;
  EXPECT_TRUE(serializable_v<user::Particle>);                // public member
  EXPECT_TRUE(serializable_v<user::Handle>);                  // private member, befriended
  EXPECT_TRUE(serializable_v<user::Mesh>);                    // free, in the type's namespace
  EXPECT_TRUE(serializable_v<other::Account>);                // free, in boost::serialization
  EXPECT_TRUE(serializable_v<user::Versioned>);               // split member, final class
  EXPECT_TRUE(serializable_v<user::Square>);                  // derived, with a base_object
  EXPECT_TRUE(serializable_v<std::unique_ptr<user::Shape>>);  // Boost's header is included
  EXPECT_TRUE(serializable_v<std::vector<std::shared_ptr<user::Particle>>>);
  EXPECT_TRUE((serializable_v<std::map<std::string, std::vector<other::Account>>>));
  EXPECT_TRUE((serializable_v<std::optional<std::variant<int, user::Mesh>>>));
  EXPECT_TRUE(serializable_v<std::vector<bool>>);
  EXPECT_TRUE(serializable_v<user::Vec3>);  // raw
}

struct Opaque {  // a std::string member makes it not raw, and it has no serialize
  std::string text;
};
struct HasOtherMember {  // a member of another name is not a serialize
  std::string text;
  void save_to(std::string&) const {}
};

TEST(SerdeUserTypes, TheCompileTimeCheckNamesTheTypeWithoutSerializeInsideContainers) {
  using detail::first_unserializable_t;
  using detail::serializable_v;
  EXPECT_FALSE(serializable_v<Opaque>);
  EXPECT_FALSE(serializable_v<HasOtherMember>);
  EXPECT_FALSE(serializable_v<std::vector<Opaque>>);
  EXPECT_TRUE((std::is_same_v<first_unserializable_t<Opaque>, Opaque>));
  EXPECT_TRUE(
      (std::is_same_v<first_unserializable_t<std::map<int, std::tuple<int, Opaque>>>, Opaque>));
  EXPECT_TRUE(
      (std::is_same_v<first_unserializable_t<std::pair<std::vector<HasOtherMember>, Opaque>>,
                      HasOtherMember>));
  EXPECT_TRUE((std::is_same_v<first_unserializable_t<std::optional<const Opaque>>, Opaque>));
  EXPECT_TRUE((std::is_void_v<first_unserializable_t<std::vector<user::Particle>>>));
}

}  // namespace
}  // namespace weft::serde
