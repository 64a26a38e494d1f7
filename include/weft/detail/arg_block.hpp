// The argument block of a call: the one format for a task's, an actor call's and an actor
// constructor's arguments, with one writer (ArgWriter) and one reader (ArgReader).
//
// One entry per argument, a tag byte then its body:
//   kInline  u64 length, then the value's encoded bytes
//   kRef     no body: the caller's next ref (EncodedArgs::refs, in order), resolved by the
//            submitter before the call leaves (only ever in the submitter's own copy)
//   kStored  the value lies in a node store: object id, holder rank, size (StoredArg). The
//            executor opens or pulls it and pins it for the call (CallArgs::pins, in order)
// A reader checks every length against the block, so a corrupt block raises SerializationError.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "weft/detail/ids.hpp"
#include "weft/detail/object_state.hpp"
#include "weft/detail/serde_buffer.hpp"
#include "weft/errors.hpp"

namespace weft::detail {

enum class ArgTag : uint8_t { kInline = 0, kRef = 1, kStored = 2 };

struct StoredArg {
  ObjectId id;
  int32_t holder = -1;  // a rank of the node whose store holds the primary
  uint64_t size = 0;
};

// Appends entries to a buffer.
class ArgWriter {
 public:
  explicit ArgWriter(serde::Buffer& out) : out_(out) {}

  void inline_value(const void* p, uint64_t n) {
    tag(ArgTag::kInline);
    out_.append(&n, sizeof n);
    out_.append(p, n);
  }
  // An inline entry whose bytes the caller encodes next, then closes with end_inline(at).
  size_t begin_inline() {
    tag(ArgTag::kInline);
    const size_t at = out_.size();
    out_.grow(sizeof(uint64_t));
    return at;
  }
  void end_inline(size_t at) {
    const uint64_t n = out_.size() - at - sizeof(uint64_t);
    std::memcpy(out_.data() + at, &n, sizeof n);
  }
  void ref() { tag(ArgTag::kRef); }
  void stored(const StoredArg& a) {
    tag(ArgTag::kStored);
    out_.append(&a.id, sizeof a.id);
    out_.append(&a.holder, sizeof a.holder);
    out_.append(&a.size, sizeof a.size);
  }

 private:
  void tag(ArgTag t) {
    const auto b = static_cast<uint8_t>(t);
    out_.append(&b, 1);
  }
  serde::Buffer& out_;
};

struct ArgEntry {
  ArgTag tag = ArgTag::kInline;
  const char* data = nullptr;  // kInline: the value's bytes
  uint64_t size = 0;           // kInline: their length; kStored: the value's size
  StoredArg stored;            // kStored
};

// Walks a block entry by entry.
class ArgReader {
 public:
  ArgReader(const char* data, size_t size) : in_(data, size) {}
  bool done() const { return in_.done(); }
  ArgEntry next() {
    ArgEntry e;
    uint8_t t;
    in_.read(&t, 1);
    switch (static_cast<ArgTag>(t)) {
      case ArgTag::kInline:
        e.tag = ArgTag::kInline;
        in_.read(&e.size, sizeof e.size);
        e.data = in_.skip(e.size);
        return e;
      case ArgTag::kRef:
        e.tag = ArgTag::kRef;
        return e;
      case ArgTag::kStored:
        e.tag = ArgTag::kStored;
        in_.read(&e.stored.id, sizeof e.stored.id);
        in_.read(&e.stored.holder, sizeof e.stored.holder);
        in_.read(&e.stored.size, sizeof e.stored.size);
        e.size = e.stored.size;
        return e;
    }
    throw SerializationError("argument block: unknown entry tag " + std::to_string(t) +
                             " at byte " + std::to_string(in_.position() - 1));
  }

 private:
  serde::Reader in_;
};

// What a registered function decodes its arguments from, on the executing rank: the block, and
// the stored values its kStored entries name, opened and pinned for the call.
struct CallArgs {
  const char* data = nullptr;
  size_t size = 0;
  const std::shared_ptr<const Payload>* pins = nullptr;
  size_t num_pins = 0;
};

}  // namespace weft::detail
