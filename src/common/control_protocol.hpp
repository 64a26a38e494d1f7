// The control socket's request/reply codec (docs/operations.md, "The weft CLI"). One request per
// connection: a JSON object on one line,
//   {"version":1,"token":"<the session's token>","command":"snapshot"}
// and one JSON reply, {"version":1,"ok":true,"result":{...}} or
// {"version":1,"ok":false,"code":"<bad_token|malformed|...>","error":"<what to do>"}.
// Pure and bounded: parse_request never throws and never reads past kMaxRequestBytes, so the
// rank-0 thread that serves the socket cannot be crashed or held by what a client sends. The
// `weft` CLI links this file and nothing else of the runtime.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace weft::control {

inline constexpr int kVersion = 1;
inline constexpr size_t kMaxRequestBytes = 64 * 1024;  // a request is a few hundred bytes
inline constexpr size_t kTokenHexChars = 64;           // 32 random bytes
inline constexpr const char* kSocketName = "control.sock";
inline constexpr const char* kTokenName = "control.token";

// The commands rank 0 answers: "ping" (is the job there?), "snapshot" (its state: what
// `weft status` and `list` show) and "metrics" (the same without the list of every object rank 0
// knows, which is most of a busy job's snapshot: what `weft metrics` shows, cheap to scrape).
bool known_command(std::string_view command);

struct Request {
  std::string command;
};

struct ParseResult {
  std::optional<Request> request;  // set when the request is valid
  std::string code;                // else why not: oversize, malformed, bad_version, ...
  std::string error;               // ... and a message that says what to do
};

// Checks `text` (one request, without or with its final newline) against the session's token.
ParseResult parse_request(std::string_view text, std::string_view token);

std::string encode_request(const Request& r, std::string_view token);
std::string ok_reply(nlohmann::json result);
std::string error_reply(std::string_view code, std::string_view error);

struct Reply {
  bool ok = false;
  std::string code, error;  // when !ok
  nlohmann::json result;    // when ok
};
// A reply as the CLI reads it; a reply that is not one becomes !ok with code "bad_reply".
Reply parse_reply(std::string_view text);

// Constant-time comparison (the token is a secret).
bool same_token(std::string_view a, std::string_view b);

}  // namespace weft::control
