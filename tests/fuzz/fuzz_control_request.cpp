// The control socket's request parser (src/common/control_protocol.cpp), as rank 0's control
// thread runs it on whatever a local client sends, and the CLI's reply parser. Neither may throw
// (not even a weft::Error: the server has no handler for one), every refusal carries a code and
// a message, and a request can only pass with the session's token and a known command.
#include <string_view>

#include "common/control_protocol.hpp"
#include "fuzz_harness.hpp"

namespace {

using namespace weft;

const std::string kToken(control::kTokenHexChars, 'f');

void decode(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  control::ParseResult r;
  try {
    r = control::parse_request(text, kToken);
  } catch (...) {
    WEFT_FUZZ_CHECK(!"parse_request threw");
  }
  if (r.request) {
    WEFT_FUZZ_CHECK(size <= control::kMaxRequestBytes);
    WEFT_FUZZ_CHECK(text.find(kToken) != std::string_view::npos);
    WEFT_FUZZ_CHECK(control::known_command(r.request->command));
  } else {
    WEFT_FUZZ_CHECK(!r.code.empty() && !r.error.empty());
  }
  try {
    control::Reply reply = control::parse_reply(text);
    WEFT_FUZZ_CHECK(reply.ok || !reply.code.empty());
  } catch (...) {
    WEFT_FUZZ_CHECK(!"parse_reply threw");
  }
}

std::vector<fuzz::Seed> seeds() {
  auto seed = [](std::string name, const std::string& s) {
    return fuzz::Seed{std::move(name), std::vector<char>(s.begin(), s.end())};
  };
  return {seed("ping", control::encode_request({"ping"}, kToken)),
          seed("snapshot", control::encode_request({"snapshot"}, kToken)),
          seed("wrong_token", control::encode_request({"snapshot"}, "0123")),
          seed("ok_reply", control::ok_reply({{"pong", true}})),
          seed("error_reply", control::error_reply("busy", "try again"))};
}

}  // namespace

WEFT_FUZZ_TARGET(seeds, decode)
