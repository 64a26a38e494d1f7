// A command for the event loop: any callable taking the loop, move-only captures included (a
// PendingCall travels in one as a unique_ptr), in one allocation. A command that never runs,
// because it was still queued when the loop closed, destroys what it captured, so nothing it owns
// leaks (LeakSanitizer checks this at a clean exit; scripts/test.sh --sanitize).
#pragma once

#include "common/move_only_function.hpp"

namespace weft::core {

class EventLoop;

using Command = MoveOnlyFunction<void(EventLoop&)>;

}  // namespace weft::core
