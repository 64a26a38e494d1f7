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
  ErrorInfo error;
  std::atomic<ObjectStatus> status_{ObjectStatus::kPending};
  // A borrowed ref asks its owner for the value at most once.
  std::atomic<bool> fetch_requested{false};
  // Set when a ref to this object was sent to another rank; the owner then keeps the value
  // alive for borrowers (see docs/architecture.md, "Reference counting").
  std::atomic<bool> escaped{false};
};

using StatePtr = std::shared_ptr<ObjectState>;

}  // namespace weft::detail
