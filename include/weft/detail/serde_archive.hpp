// The Boost.Serialization side of weft::serde: stream buffers that write straight into a Buffer
// and read straight out of a Reader (no std::stringstream copies), and the input archive that
// checks every length it reads against the bytes that are left before anything is allocated.
#pragma once

#include <algorithm>
#include <boost/archive/basic_archive.hpp>
#include <boost/archive/binary_iarchive_impl.hpp>
#include <boost/archive/binary_oarchive_impl.hpp>
#include <boost/archive/detail/register_archive.hpp>
#include <boost/serialization/collection_size_type.hpp>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <streambuf>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/detail/serde_buffer.hpp"

namespace boost::serialization {
// Declared here, defined by <boost/serialization/shared_ptr.hpp>, which every type that
// serializes a std::shared_ptr includes (the load below is instantiated only there).
template <template <class> class SPT>
class shared_ptr_helper;
}  // namespace boost::serialization

namespace weft::serde::detail {

// No header (the runtime versions its own wire format) and no codecvt (binary data; imbuing a
// locale per archive costs more than the archive).
inline constexpr unsigned kArchiveFlags = boost::archive::no_header | boost::archive::no_codecvt;

[[noreturn]] void throw_bad_length(const char* what, size_t length, size_t left);
[[noreturn]] void throw_bad_bool(unsigned value);
[[noreturn]] void throw_bad_class_id(int id, int classes);
[[noreturn]] void throw_bad_object_id(unsigned id, size_t objects);
[[noreturn]] void throw_bad_object_reference(const char* why, unsigned id);

// Appends everything Boost writes to a Buffer.
class OutBuf final : public std::streambuf {
 public:
  explicit OutBuf(Buffer& out) : out_(out) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    out_.append(s, static_cast<size_t>(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      char ch = traits_type::to_char_type(c);
      out_.append(&ch, 1);
    }
    return traits_type::not_eof(c);
  }

 private:
  Buffer& out_;
};

// Exposes the Reader's remaining bytes as the get area; commit() moves the Reader past what the
// archive consumed. Reading past the end yields EOF, which Boost turns into input_stream_error.
class InBuf final : public std::streambuf {
 public:
  explicit InBuf(Reader& in) : in_(in) {
    char* b = const_cast<char*>(in.cursor());  // the get area is never written through
    setg(b, b, b + in.remaining());
  }
  size_t left() const { return static_cast<size_t>(egptr() - gptr()); }
  void commit() { in_.skip(static_cast<size_t>(gptr() - eback())); }

 protected:
  std::streamsize xsgetn(char* s, std::streamsize n) override {
    size_t k = std::min(static_cast<size_t>(n), left());
    if (k != 0) std::memcpy(s, gptr(), k);
    setg(eback(), gptr() + k, egptr());  // not gbump: it takes an int
    return static_cast<std::streamsize>(k);
  }
  std::streamsize showmanyc() override { return static_cast<std::streamsize>(left()); }

 private:
  Reader& in_;
};

// Boost's binary output archive. Its own class for one reason: Boost's primitive layer builds a
// std::locale with a codecvt facet for every archive even when told not to use it (no_codecvt),
// which is more than half of the cost of a small value; weft's archives skip that
// (src/serde/archive.cpp).
class OArchive
    : public boost::archive::binary_oarchive_impl<OArchive, char, std::char_traits<char>> {
  using Impl = boost::archive::binary_oarchive_impl<OArchive, char, std::char_traits<char>>;

 public:
  explicit OArchive(OutBuf& sb);
};

// Boost's binary input archive plus length guards: a collection size or string length larger than
// the bytes left cannot be genuine (every element, monostate included, takes at least one byte),
// so it is rejected before Boost reserves or resizes anything. The template members of the Boost
// bases are instantiated for this class in src/serde/archive.cpp.
//
// Object references are checked too. Boost 1.74 gives a pointer whose bytes name an object loaded
// earlier (object tracking) that object's address, whatever it is: on hostile bytes a
// std::shared_ptr<Base> then owns a Particle, and deletes it as a Base. The archive keeps, for
// each tracked object, how it was loaded (through a pointer of which class, and what owns it),
// and a pointer may name an earlier object only as the encoder can have written it: one loaded
// through a pointer of the same class, and, for the owning pointers, one the same kind of owner
// shares (std::shared_ptr with std::shared_ptr; a std::unique_ptr never shares). A pointer to an
// object that the bytes hold by value (Boost allows it for raw pointers) is refused too: an
// owning pointer given that address would free memory it does not own, and the archive cannot
// tell a raw pointer from an owning one there.
class IArchive
    : public boost::archive::binary_iarchive_impl<IArchive, char, std::char_traits<char>> {
  using Impl = boost::archive::binary_iarchive_impl<IArchive, char, std::char_traits<char>>;
  using Primitive = boost::archive::basic_binary_iprimitive<IArchive, char, std::char_traits<char>>;

 public:
  explicit IArchive(InBuf& sb);

  // Who will own the object the next pointer load makes: set by the loads of std::unique_ptr and
  // std::shared_ptr below just before they load their raw pointer; any other pointer is raw.
  enum class Owner : uint8_t { kRaw, kUnique, kShared };
  void expect_owner(Owner o) { next_owner_ = o; }

 private:
  friend class boost::archive::detail::interface_iarchive<IArchive>;
  friend class boost::archive::basic_binary_iarchive<IArchive>;
  friend class boost::archive::load_access;
  friend class boost::archive::basic_binary_iprimitive<IArchive, char, std::char_traits<char>>;
  friend Impl;

  template <class T>
  void load_override(T& t) {
    Impl::load_override(t);
  }
  void load_override(boost::serialization::collection_size_type& t) {
    Impl::load_override(t);
    if (static_cast<size_t>(t) > sb_.left()) throw_bad_length("collection size", t, sb_.left());
  }
  // Class ids, read before each object loaded through a pointer. Boost 1.74 indexes its table of
  // classes with them unchecked (a wrong one is a null or wild pointer there). A valid one is
  // the null-pointer tag, a class already registered, or the next one. Boost registers a class
  // at the first load_object of its serializer (every object that is not primitive comes
  // through it, also one loaded behind a pointer), so counting distinct serializers there counts
  // the classes: see load_object below.
  void load_override(boost::archive::class_id_type& t) {
    Impl::load_override(t);
    const int id = static_cast<int>(t);
    const int classes = static_cast<int>(serializers_.size());
    if (id < -1 || id > classes) throw_bad_class_id(id, classes);
    // Class ids are read only by pointer loads: the object id that may follow is this pointer's.
    pointer_ = Pointer{id, next_owner_};
    next_owner_ = Owner::kRaw;
  }
  // Object ids, read before each tracked object: a new object takes the next id; a smaller one
  // names an object loaded before (see the class comment).
  void load_override(boost::archive::object_id_type& t) {
    Impl::load_override(t);
    const unsigned id = static_cast<unsigned>(t);
    const std::optional<Pointer> p = std::exchange(pointer_, std::nullopt);
    if (id > objects_.size()) throw_bad_object_id(id, objects_.size());
    if (id == objects_.size()) {
      objects_.push_back(p ? Tracked{p->class_id, p->owner} : Tracked{kByValue, Owner::kRaw});
      return;
    }
    if (!p) return;  // an object by value already loaded: Boost loads nothing into this one
    const Tracked& o = objects_[id];
    if (o.class_id == kByValue) throw_bad_object_reference("an object held by value", id);
    if (o.class_id != p->class_id) throw_bad_object_reference("an object of another class", id);
    if (p->owner == Owner::kUnique)
      throw_bad_object_reference("an object for a std::unique_ptr, which never shares", id);
    if (p->owner == Owner::kShared && o.owner != Owner::kShared)
      throw_bad_object_reference("an object no std::shared_ptr owns, for a std::shared_ptr", id);
  }
  void load_override(boost::archive::class_id_reference_type& t) {
    load_override(static_cast<boost::archive::class_id_type&>(t));
  }

 public:
  // Hides basic_iarchive::load_object, which Boost's serializers call on the archive's own type.
  void load_object(void* t, const boost::archive::detail::basic_iserializer& bis) {
    if (std::find(serializers_.begin(), serializers_.end(), &bis) == serializers_.end())
      serializers_.push_back(&bis);
    pointer_.reset();  // an object id read now is this object's (a null pointer reads none)
    boost::archive::detail::basic_iarchive::load_object(t, bis);
  }

 private:
  using Primitive::load;
  void load(std::string& s) {
    size_t n = 0;
    load_binary(&n, sizeof n);
    if (n > sb_.left()) throw_bad_length("string length", n, sb_.left());
    s.resize(n);
    if (n != 0) load_binary(s.data(), n);
  }
  // Boost only asserts here (and only in debug builds); a corrupt bool is a decode error.
  void load(bool& b) {
    unsigned char c = 0;
    load_binary(&c, 1);
    if (c > 1) throw_bad_bool(c);
    b = c != 0;
  }

  static constexpr int kByValue = -2;  // Tracked::class_id of an object not behind a pointer
  struct Pointer {
    int class_id = 0;
    Owner owner = Owner::kRaw;
  };
  struct Tracked {
    int class_id = kByValue;  // the pointer's class id, or kByValue
    Owner owner = Owner::kRaw;
  };

  InBuf& sb_;
  std::vector<const void*> serializers_;  // distinct, in registration order (load_object)
  std::vector<Tracked> objects_;          // by object id
  std::optional<Pointer> pointer_;        // a pointer load whose object id comes next
  Owner next_owner_ = Owner::kRaw;
};

// The owning pointers' loads on a weft archive: Boost's, with the owner said first (more
// constrained than Boost's templates for any archive, so overload resolution takes these).
template <class Archive, class T>
  requires std::same_as<Archive, IArchive>
void load(Archive& ar, std::unique_ptr<T>& t, const unsigned int) {
  T* r = nullptr;
  ar.expect_owner(IArchive::Owner::kUnique);
  ar >> r;
  t.reset(r);
}
template <class Archive, class T>
  requires std::same_as<Archive, IArchive>
void load(Archive& ar, std::shared_ptr<T>& t, const unsigned int) {
  T* r = nullptr;
  ar.expect_owner(IArchive::Owner::kShared);
  ar >> r;
  // Boost's helper (its id is null): one control block per object, so aliases share it.
  using Helper = std::conditional_t<std::same_as<Archive, IArchive>,
                                    boost::serialization::shared_ptr_helper<std::shared_ptr>, void>;
  ar.template get_helper<Helper>(nullptr).reset(t, r);
}

}  // namespace weft::serde::detail

// Defined in src/serde/archive.cpp: no per-archive locale (see OArchive).
template <>
boost::archive::basic_binary_iprimitive<weft::serde::detail::IArchive, char,
                                        std::char_traits<char>>::
    basic_binary_iprimitive(std::basic_streambuf<char, std::char_traits<char>>& sb,
                            bool no_codecvt);
template <>
boost::archive::basic_binary_oprimitive<weft::serde::detail::OArchive, char,
                                        std::char_traits<char>>::
    basic_binary_oprimitive(std::basic_streambuf<char, std::char_traits<char>>& sb,
                            bool no_codecvt);

namespace weft::serde::detail {
inline IArchive::IArchive(InBuf& sb) : Impl(sb, kArchiveFlags), sb_(sb) { init(kArchiveFlags); }
inline OArchive::OArchive(OutBuf& sb) : Impl(sb, kArchiveFlags) { init(kArchiveFlags); }
}  // namespace weft::serde::detail

BOOST_SERIALIZATION_REGISTER_ARCHIVE(weft::serde::detail::IArchive)
BOOST_SERIALIZATION_USE_ARRAY_OPTIMIZATION(weft::serde::detail::IArchive)
BOOST_SERIALIZATION_REGISTER_ARCHIVE(weft::serde::detail::OArchive)
BOOST_SERIALIZATION_USE_ARRAY_OPTIMIZATION(weft::serde::detail::OArchive)
