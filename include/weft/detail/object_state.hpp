// The local record behind an ObjectRef: whether the value is there yet, its bytes, or the error
// that replaced it. ObjectRefs share one ObjectState per object per rank; when the last ref on
// this rank goes away, the state (and the value it holds) goes with it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weft/detail/ids.hpp"

namespace weft::detail {

// Bytes of a serialized value. Inline values own a vector; store-backed values (later) keep a
// pinned view of shared memory, so a same-node read never copies.
class Payload {
 public:
  virtual ~Payload() = default;
  virtual const char* data() const = 0;
  virtual size_t size() const = 0;
};

class InlinePayload final : public Payload {
 public:
  explicit InlinePayload(std::vector<char> bytes) : bytes_(std::move(bytes)) {}
  const char* data() const override { return bytes_.data(); }
  size_t size() const override { return bytes_.size(); }

 private:
  std::vector<char> bytes_;
};

// Bytes owned by someone else that outlives this payload (a call's argument block, viewed by a
// View parameter for the duration of the call).
class BorrowedBytes final : public Payload {
 public:
  BorrowedBytes(const char* p, size_t n) : p_(p), n_(n) {}
  const char* data() const override { return p_; }
  size_t size() const override { return n_; }

 private:
  const char* p_;
  size_t n_;
};

enum class ErrorKind : uint8_t {
  kNone = 0,
  kTask = 1,        // TaskError
  kActorDied = 2,   // ActorDiedError
  kObjectLost = 3,  // ObjectLostError
  kOwnerDied = 4,   // OwnerDiedError
  kInfeasible = 5,  // InfeasibleError
  kGeneric = 6,     // weft::Error
  kStoreFull = 7,   // ObjectStoreFullError
};

struct ErrorInfo {
  ErrorKind kind = ErrorKind::kNone;
  int32_t rank = -1;
  std::string type_name;  // the remote exception's type (TaskError)
  std::string message;
  std::string function;   // task or method name
};

enum class ObjectStatus : uint8_t { kPending = 0, kReady = 1, kFailed = 2 };

struct ObjectState {
  explicit ObjectState(ObjectId i) : id(i) {}
  ~ObjectState();
  ObjectState(const ObjectState&) = delete;
  ObjectState& operator=(const ObjectState&) = delete;

  ObjectStatus status() const { return status_.load(std::memory_order_acquire); }
  bool done() const { return status() != ObjectStatus::kPending; }

  const ObjectId id;
  // Written once before status_ leaves kPending (release), read after (acquire).
  std::shared_ptr<const Payload> payload;
  // Set once, before status_ becomes kFailed (release), read after (acquire). Out of line:
  // few objects fail, and three strings would double the per-ref control state.
  std::unique_ptr<ErrorInfo> failure;
  // The error of a kFailed state (an empty ErrorInfo for any other).
  const ErrorInfo& error() const {
    static const ErrorInfo kNoError;
    return failure ? *failure : kNoError;
  }
  std::atomic<ObjectStatus> status_{ObjectStatus::kPending};
  // A borrowed ref asks its owner for the value at most once.
  std::atomic<bool> fetch_requested{false};
  // Set when a ref was serialized outside any Weft message (by hand): its state is then kept
  // until the job ends (src/core/ref_collector.cpp).
  std::atomic<bool> escaped{false};
  // Borrower side: credits the owner counted for the messages that brought this ref here;
  // returned to the owner when this state dies (docs/architecture.md, "Reference counting").
  std::atomic<uint32_t> borrow_credits{0};
  // Only for values that contain refs: their states, kept while the value lives so that a
  // reader deserializing it finds them (and their credits) alive. Written before completion.
  std::unique_ptr<std::vector<std::shared_ptr<ObjectState>>> contained;
};

using StatePtr = std::shared_ptr<ObjectState>;

}  // namespace weft::detail
