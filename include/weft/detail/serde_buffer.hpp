// Byte containers of the serialization layer: Buffer (growable, contiguous output) and Reader
// (bounds-checked input). Included by weft/serialization.hpp; not meant to be included alone.
#pragma once

#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

namespace weft::serde {

namespace detail {
// Out of line so that the hot inline paths stay small; both throw weft::SerializationError.
[[noreturn]] void throw_overrun(size_t wanted, size_t position, size_t size);
}  // namespace detail

// Growable output buffer. The bytes live in a std::vector<char> so that take() hands them to the
// object store or a message without a copy. append() is the fast way in: grow() value-initialises
// the new bytes (std::vector cannot leave them uninitialised), so use it only for small items.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t reserve_bytes) { bytes_.reserve(reserve_bytes); }

  void append(const void* p, size_t n) {
    if (n == 0) return;
    const char* c = static_cast<const char*>(p);
    bytes_.insert(bytes_.end(), c, c + n);
  }
  // Returns a pointer to n new bytes at the end (valid until the next call that grows the buffer).
  char* grow(size_t n) {
    size_t old = bytes_.size();
    bytes_.resize(old + n);
    return bytes_.data() + old;
  }
  size_t size() const { return bytes_.size(); }
  const char* data() const { return bytes_.data(); }
  char* data() { return bytes_.data(); }
  void clear() { bytes_.clear(); }
  // Drops the bytes after the first n (n <= size()).
  void truncate(size_t n) {
    if (n < bytes_.size()) bytes_.resize(n);
  }
  void reserve(size_t n) { bytes_.reserve(n); }
  size_t capacity() const { return bytes_.capacity(); }
  // Moves the bytes out; the buffer is empty afterwards.
  std::vector<char> take() {
    std::vector<char> out = std::move(bytes_);
    bytes_.clear();
    return out;
  }

 private:
  std::vector<char> bytes_;
};

// Reads from a byte range it does not own. Every read is checked against the end of the range, so
// a truncated or corrupt message raises SerializationError instead of reading past it.
class Reader {
 public:
  Reader(const char* data, size_t size) : data_(data), size_(size) {}

  void read(void* out, size_t n) {
    if (n > size_ - pos_) detail::throw_overrun(n, pos_, size_);
    if (n != 0) std::memcpy(out, data_ + pos_, n);
    pos_ += n;
  }
  // Returns a pointer to the next n bytes and moves past them.
  const char* skip(size_t n) {
    if (n > size_ - pos_) detail::throw_overrun(n, pos_, size_);
    const char* p = data_ + pos_;
    pos_ += n;
    return p;
  }
  size_t remaining() const { return size_ - pos_; }
  bool done() const { return pos_ == size_; }
  // Offset of the next byte from the start of the range (for error messages and archives).
  size_t position() const { return pos_; }
  const char* cursor() const { return data_ + pos_; }

 private:
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace weft::serde
