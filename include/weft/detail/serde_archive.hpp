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
#include <cstddef>
#include <cstring>
#include <streambuf>
#include <string>
#include <vector>

#include "weft/detail/serde_buffer.hpp"

namespace weft::serde::detail {

// No header (the runtime versions its own wire format) and no codecvt (binary data; imbuing a
// locale per archive costs more than the archive).
inline constexpr unsigned kArchiveFlags = boost::archive::no_header | boost::archive::no_codecvt;

[[noreturn]] void throw_bad_length(const char* what, size_t length, size_t left);
[[noreturn]] void throw_bad_bool(unsigned value);
[[noreturn]] void throw_bad_class_id(int id, int classes);

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
class IArchive
    : public boost::archive::binary_iarchive_impl<IArchive, char, std::char_traits<char>> {
  using Impl = boost::archive::binary_iarchive_impl<IArchive, char, std::char_traits<char>>;
  using Primitive = boost::archive::basic_binary_iprimitive<IArchive, char, std::char_traits<char>>;

 public:
  explicit IArchive(InBuf& sb);

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
  }
  void load_override(boost::archive::class_id_reference_type& t) {
    load_override(static_cast<boost::archive::class_id_type&>(t));
  }

 public:
  // Hides basic_iarchive::load_object, which Boost's serializers call on the archive's own type.
  void load_object(void* t, const boost::archive::detail::basic_iserializer& bis) {
    if (std::find(serializers_.begin(), serializers_.end(), &bis) == serializers_.end())
      serializers_.push_back(&bis);
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

  InBuf& sb_;
  std::vector<const void*> serializers_;  // distinct, in registration order (load_object)
};

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
