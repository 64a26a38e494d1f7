#include "common/control_protocol.hpp"

namespace weft::control {
namespace {

ParseResult fail(std::string code, std::string error) {
  ParseResult r;
  r.code = std::move(code);
  r.error = std::move(error);
  return r;
}

}  // namespace

bool known_command(std::string_view command) {
  return command == "ping" || command == "snapshot" || command == "metrics" ||
         command == "timeline";
}

bool same_token(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  return diff == 0;
}

ParseResult parse_request(std::string_view text, std::string_view token) {
  if (text.size() > kMaxRequestBytes) {
    return fail("oversize", "the request has more than " + std::to_string(kMaxRequestBytes) +
                                " bytes; a control request is one short JSON line");
  }
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  // No exceptions: a parse error yields a discarded value. Depth is bounded by the size cap
  // (nlohmann recurses per nesting level; 64 KiB of '[' stays far below the stack's limit).
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return fail("malformed",
                "the request is not a JSON object on one line, such as "
                "{\"version\":1,\"token\":\"...\",\"command\":\"ping\"}");
  }
  const auto v = j.find("version");
  if (v == j.end() || !v->is_number_integer()) {
    return fail("malformed",
                "the request has no integer \"version\" field (this job speaks "
                "version " +
                    std::to_string(kVersion) + ")");
  }
  if (v->get<int64_t>() != kVersion) {
    return fail("bad_version", "request version " + std::to_string(v->get<int64_t>()) +
                                   " is not known: this job speaks version " +
                                   std::to_string(kVersion) +
                                   "; use the weft CLI of the Weft build that runs the job");
  }
  const auto t = j.find("token");
  if (t == j.end() || !t->is_string() || !same_token(t->get_ref<const std::string&>(), token)) {
    return fail("bad_token", std::string("the request's token is ") +
                                 (t == j.end() ? "missing" : "wrong") +
                                 ": read it from the session directory's control.token, which "
                                 "only the job's user can read");
  }
  const auto c = j.find("command");
  if (c == j.end() || !c->is_string()) {
    return fail("malformed", "the request has no string \"command\" field (ping, snapshot, metrics or "
                "timeline)");
  }
  const std::string& command = c->get_ref<const std::string&>();
  if (!known_command(command)) {
    return fail("unknown_command", "unknown command \"" + command.substr(0, 64) +
                                       "\": this job answers ping, snapshot, "
                                       "metrics and timeline");
  }
  ParseResult r;
  r.request = Request{command};
  return r;
}

std::string encode_request(const Request& r, std::string_view token) {
  nlohmann::json j = {{"version", kVersion}, {"token", std::string(token)}, {"command", r.command}};
  return j.dump() + "\n";
}

std::string ok_reply(nlohmann::json result) {
  nlohmann::json j = {{"version", kVersion}, {"ok", true}, {"result", std::move(result)}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string error_reply(std::string_view code, std::string_view error) {
  nlohmann::json j = {{"version", kVersion},
                      {"ok", false},
                      {"code", std::string(code)},
                      {"error", std::string(error)}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Reply parse_reply(std::string_view text) {
  Reply r;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("ok") || !j["ok"].is_boolean()) {
    r.code = "bad_reply";
    r.error = "the job's reply is not a control reply (" + std::to_string(text.size()) +
              " bytes); is the session directory a Weft job's?";
    return r;
  }
  // Typed reads only: a "version" of 3e57 read as an int is undefined behaviour, and a "code"
  // that is not a string makes nlohmann's value() throw (both found by fuzz.control_request).
  const auto v = j.find("version");
  if (v == j.end() || !v->is_number_integer() || v->get<int64_t>() != kVersion) {
    r.code = "bad_version";
    r.error = "the job answers with control version " +
              (v == j.end() ? std::string("(none)") : v->dump()) + ", this weft CLI speaks " +
              std::to_string(kVersion);
    return r;
  }
  auto text_of = [&j](const char* key, const char* otherwise) {
    const auto f = j.find(key);
    return f != j.end() && f->is_string() ? f->get<std::string>() : std::string(otherwise);
  };
  r.ok = j["ok"].get<bool>();
  if (r.ok) {
    r.result = j.value("result", nlohmann::json::object());
  } else {
    // A refusal always carries a code: an absent, non-string or empty one reads as "error"
    // (an empty "code" string was found by fuzz.control_request).
    r.code = text_of("code", "");
    if (r.code.empty()) r.code = "error";
    r.error = text_of("error", "");
  }
  return r;
}

}  // namespace weft::control
