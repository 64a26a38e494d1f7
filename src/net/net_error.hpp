// The transport's one error type. The runtime catches it and turns it into the user-facing
// error that fits (a peer that left becomes ActorDiedError/OwnerDiedError one level up).
#pragma once

#include <string>

#include "weft/errors.hpp"

namespace weft::net {

// Misuse of the transport (bad rank, oversize message, reserved type) or a failure to set it up
// (shared-memory segment, UCX). The message names the rank and what to do.
class TransportError : public Error {
 public:
  using Error::Error;
};

}  // namespace weft::net
