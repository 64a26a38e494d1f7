// Messages a protocol class returns instead of sending: the event loop sends them, in order,
// right after the call (EventLoop::send_all), and unit tests read them.
#pragma once

#include <vector>

#include "core/wire.hpp"

namespace weft::core {

struct OutMsg {
  int dest = -1;
  Msg type{};
  std::vector<char> body;  // a whole message body (WireWriter: the version first)
};

using MsgOutbox = std::vector<OutMsg>;

}  // namespace weft::core
