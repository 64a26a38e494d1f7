// Explicit instantiation of Boost's binary input archive templates for weft's guarded IArchive
// (Boost ships them compiled only for its own archive classes), and the out-of-line error paths.
#include <cxxabi.h>

#include <boost/archive/archive_exception.hpp>
#include <boost/archive/detail/archive_serializer_map.hpp>
#include <boost/archive/impl/archive_serializer_map.ipp>
#include <boost/archive/impl/basic_binary_iarchive.ipp>
#include <boost/archive/impl/basic_binary_iprimitive.ipp>
#include <boost/archive/impl/basic_binary_oarchive.ipp>
#include <boost/archive/impl/basic_binary_oprimitive.ipp>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "weft/errors.hpp"
#include "weft/serialization.hpp"

namespace boost::archive {

// Boost's versions also build archive_locale = (stream locale + codecvt_null facet), a copy of
// every facet of the locale, and use it only without no_codecvt; weft always passes no_codecvt.
template <>
basic_binary_iprimitive<weft::serde::detail::IArchive, char, std::char_traits<char>>::
    basic_binary_iprimitive(std::basic_streambuf<char, std::char_traits<char>>& sb, bool no_codecvt)
    : m_sb(sb), codecvt_null_facet(1), locale_saver(m_sb), archive_locale() {
  if (!no_codecvt) {
    throw archive_exception(archive_exception::other_exception,
                            "weft::serde archives are binary: no_codecvt is required");
  }
}
template <>
basic_binary_oprimitive<weft::serde::detail::OArchive, char, std::char_traits<char>>::
    basic_binary_oprimitive(std::basic_streambuf<char, std::char_traits<char>>& sb, bool no_codecvt)
    : m_sb(sb), codecvt_null_facet(1), locale_saver(m_sb), archive_locale() {
  if (!no_codecvt) {
    throw archive_exception(archive_exception::other_exception,
                            "weft::serde archives are binary: no_codecvt is required");
  }
}

template class detail::archive_serializer_map<weft::serde::detail::OArchive>;
template class basic_binary_oprimitive<weft::serde::detail::OArchive, char, std::char_traits<char>>;
template class basic_binary_oarchive<weft::serde::detail::OArchive>;
template class binary_oarchive_impl<weft::serde::detail::OArchive, char, std::char_traits<char>>;
template class detail::archive_serializer_map<weft::serde::detail::IArchive>;
template class basic_binary_iprimitive<weft::serde::detail::IArchive, char, std::char_traits<char>>;
template class basic_binary_iarchive<weft::serde::detail::IArchive>;
template class binary_iarchive_impl<weft::serde::detail::IArchive, char, std::char_traits<char>>;
}  // namespace boost::archive

namespace weft::serde::detail {

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(type.name());
}

void throw_overrun(size_t wanted, size_t position, size_t size) {
  throw SerializationError("truncated input: needed " + std::to_string(wanted) +
                           " bytes at offset " + std::to_string(position) + " but only " +
                           std::to_string(size - position) + " remain of " + std::to_string(size));
}

void throw_bad_length(const char* what, size_t length, size_t left) {
  throw SerializationError(std::string(what) + " " + std::to_string(length) +
                           " is larger than the " + std::to_string(left) +
                           " bytes left (corrupt or truncated input)");
}

void throw_bad_variant_index(size_t index, size_t alternatives) {
  throw SerializationError("std::variant alternative index " + std::to_string(index) +
                           " out of range (" + std::to_string(alternatives) +
                           " alternatives): corrupt input or another type");
}

void throw_bad_class_id(int id, int classes) {
  throw SerializationError("class id " + std::to_string(id) + " of an object behind a pointer, " +
                           "where only -1 (null) to " + std::to_string(classes) +
                           " can appear (corrupt input or another type)");
}

void throw_bad_object_id(unsigned id, size_t objects) {
  throw SerializationError("object id " + std::to_string(id) + " where the next new object is " +
                           std::to_string(objects) + " (corrupt input or another type)");
}

void throw_bad_object_reference(const char* why, unsigned id) {
  throw SerializationError("a pointer names object " + std::to_string(id) + ", " + why +
                           " (corrupt input, another type, or a pointer to an object serialized "
                           "by value, which weft::serde does not load)");
}

void throw_bad_bool(unsigned value) {
  throw SerializationError("invalid bool byte " + std::to_string(value) +
                           " (corrupt input, or bytes of another type)");
}

namespace {

// Why, in words, for the exception currently being handled.
std::string describe_current_exception() {
  try {
    throw;
  } catch (const SerializationError& e) {
    return e.what();
  } catch (const boost::archive::archive_exception& e) {
    switch (e.code) {
      case boost::archive::archive_exception::input_stream_error:
        return "truncated input (the archive ended early)";
      case boost::archive::archive_exception::unsupported_class_version:
        return "corrupt input or a type mismatch (unsupported class version)";
      case boost::archive::archive_exception::unregistered_class:
        return "unregistered class: a type written through a base pointer needs "
               "BOOST_CLASS_EXPORT";
      default:
        return std::string("Boost.Serialization: ") + e.what();
    }
  } catch (const std::bad_alloc&) {
    return "out of memory (a corrupt length?)";
  } catch (const std::length_error& e) {
    return std::string("bad length (corrupt input?): ") + e.what();
  } catch (const std::exception& e) {
    return type_name(typeid(e)) + " from serialize: " + e.what();
  } catch (...) {
    return "unknown exception from serialize";
  }
}

}  // namespace

void rethrow_decode_error(const std::type_info& type, size_t position) {
  throw SerializationError("weft::serde: cannot decode " + type_name(type) + " (at byte " +
                           std::to_string(position) + "): " + describe_current_exception());
}

void rethrow_encode_error(const std::type_info& type) {
  throw SerializationError("weft::serde: cannot encode " + type_name(type) + ": " +
                           describe_current_exception());
}

void throw_trailing_bytes(const std::type_info& type, size_t trailing, size_t size) {
  throw SerializationError("weft::serde: decoding " + type_name(type) + " left " +
                           std::to_string(trailing) + " of " + std::to_string(size) +
                           " bytes unread: the bytes hold another type or are corrupt");
}

}  // namespace weft::serde::detail
