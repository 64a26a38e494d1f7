#include "common/control_protocol.hpp"

#include <gtest/gtest.h>

#include <random>

namespace weft::control {
namespace {

const std::string kToken(kTokenHexChars, 'a');

std::string code_of(std::string_view text) {
  ParseResult r = parse_request(text, kToken);
  EXPECT_FALSE(r.request) << text;
  EXPECT_FALSE(r.error.empty()) << text;
  return r.code;
}

TEST(ControlRequest, AcceptsWhatTheCliSends) {
  for (const char* c : {"ping", "snapshot", "metrics"}) {
    ParseResult r = parse_request(encode_request({c}, kToken), kToken);
    ASSERT_TRUE(r.request) << r.error;
    EXPECT_EQ(r.request->command, c);
  }
}

TEST(ControlRequest, RejectsMalformedInput) {
  EXPECT_EQ(code_of(""), "malformed");
  EXPECT_EQ(code_of("not json"), "malformed");
  EXPECT_EQ(code_of("{\"version\":1,"), "malformed");
  EXPECT_EQ(code_of("[1,2,3]"), "malformed");
  EXPECT_EQ(code_of("\"snapshot\""), "malformed");
  EXPECT_EQ(code_of("{\"token\":\"" + kToken + "\",\"command\":\"ping\"}"), "malformed");
  EXPECT_EQ(code_of("{\"version\":\"1\",\"token\":\"" + kToken + "\",\"command\":\"ping\"}"),
            "malformed");
  EXPECT_EQ(code_of("{\"version\":1,\"token\":\"" + kToken + "\"}"), "malformed");
  EXPECT_EQ(code_of("{\"version\":1,\"token\":\"" + kToken + "\",\"command\":7}"), "malformed");
  EXPECT_EQ(code_of(std::string("{\"version\":1\0}", 14)), "malformed");
}

TEST(ControlRequest, RejectsAnUnknownVersionSayingWhichItSpeaks) {
  ParseResult r =
      parse_request("{\"version\":2,\"token\":\"" + kToken + "\",\"command\":\"ping\"}", kToken);
  EXPECT_EQ(r.code, "bad_version");
  EXPECT_NE(r.error.find("version 2"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("speaks version 1"), std::string::npos) << r.error;
}

TEST(ControlRequest, RejectsAWrongOrMissingToken) {
  EXPECT_EQ(code_of(encode_request({"ping"}, std::string(kTokenHexChars, 'b'))), "bad_token");
  EXPECT_EQ(code_of(encode_request({"ping"}, kToken.substr(1))), "bad_token");
  EXPECT_EQ(code_of(encode_request({"ping"}, "")), "bad_token");
  EXPECT_EQ(code_of("{\"version\":1,\"command\":\"ping\"}"), "bad_token");
  EXPECT_EQ(code_of("{\"version\":1,\"token\":5,\"command\":\"ping\"}"), "bad_token");
  ParseResult r = parse_request(encode_request({"ping"}, "x"), kToken);
  EXPECT_NE(r.error.find("control.token"), std::string::npos) << r.error;
}

TEST(ControlRequest, TheTokenIsCheckedBeforeTheCommandIsRead) {
  // A client without the token learns nothing about which commands exist.
  EXPECT_EQ(code_of(encode_request({"shutdown"}, "x")), "bad_token");
  EXPECT_EQ(code_of(encode_request({"shutdown"}, kToken)), "unknown_command");
}

TEST(ControlRequest, RejectsOversizeRequestsBeforeParsing) {
  std::string big = encode_request({"ping"}, kToken);
  big.insert(1, std::string(kMaxRequestBytes, ' '));
  EXPECT_EQ(code_of(big), "oversize");
  // Just under the cap is read (and here valid: JSON allows the spaces).
  std::string fits = encode_request({"ping"}, kToken);
  fits.insert(1, std::string(kMaxRequestBytes - fits.size(), ' '));
  ASSERT_EQ(fits.size(), kMaxRequestBytes);
  EXPECT_TRUE(parse_request(fits, kToken).request);
}

TEST(ControlRequest, DeepNestingWithinTheCapIsAnErrorNotACrash) {
  const std::string deep(kMaxRequestBytes, '[');
  EXPECT_EQ(code_of(deep), "malformed");
  std::string closed =
      std::string(kMaxRequestBytes / 2, '[') + std::string(kMaxRequestBytes / 2, ']');
  EXPECT_EQ(code_of(closed), "malformed");
}

TEST(ControlRequest, RandomBytesNeverThrowAndNeverPass) {
  std::mt19937_64 rng(11);
  const std::string valid = encode_request({"snapshot"}, kToken);
  for (int i = 0; i < 20000; ++i) {
    std::string s = valid;
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) s[rng() % s.size()] = static_cast<char>(rng());
    ParseResult r;
    ASSERT_NO_THROW(r = parse_request(s, kToken));
    if (r.request) {  // an edit that kept it valid must have kept token and command
      EXPECT_TRUE(s.find(kToken) != std::string::npos) << s;
    } else {
      EXPECT_FALSE(r.code.empty());
    }
  }
}

TEST(ControlReply, RoundTripsOkAndErrors) {
  Reply ok = parse_reply(ok_reply({{"pong", true}}));
  ASSERT_TRUE(ok.ok);
  EXPECT_EQ(ok.result["pong"], true);
  Reply err = parse_reply(error_reply("busy", "try again"));
  EXPECT_FALSE(err.ok);
  EXPECT_EQ(err.code, "busy");
  EXPECT_EQ(err.error, "try again");
  EXPECT_EQ(parse_reply("garbage").code, "bad_reply");
  EXPECT_EQ(parse_reply("{\"version\":9,\"ok\":true}").code, "bad_version");
}

// Found by fuzz.control_request (corpus crash-reply_version_out_of_int_range): a version that is
// a number but no int was read as one (undefined behaviour), and fields of the wrong type threw.
TEST(ControlReply, FieldsOfTheWrongTypeAreABadReplyNotUndefinedBehaviour) {
  EXPECT_EQ(parse_reply("{\"ok\":true,\"version\":2888888888888888888888888888888888}").code,
            "bad_version");
  EXPECT_EQ(parse_reply("{\"ok\":true,\"version\":1.5}").code, "bad_version");
  EXPECT_EQ(parse_reply("{\"ok\":true,\"version\":\"1\"}").code, "bad_version");
  EXPECT_EQ(parse_reply("{\"ok\":true}").code, "bad_version");
  Reply r = parse_reply("{\"ok\":false,\"version\":1,\"code\":7,\"error\":[1]}");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.code, "error");
  EXPECT_EQ(r.error, "");
}

// Found by fuzz.control_request (corpus crash-reply_with_empty_code): a refusal whose "code" was
// an empty string came back with no code, and the CLI prints the code as the reason's name.
TEST(ControlReply, ARefusalWithAnEmptyCodeReadsAsError) {
  Reply r = parse_reply("{\"ok\":false,\"version\":1,\"code\":\"\"}");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.code, "error");
}

TEST(ControlReply, InvalidUtf8InAMessageIsReplacedNotThrown) {
  Reply r = parse_reply(error_reply("internal", std::string("bad \xff\xfe bytes")));
  EXPECT_EQ(r.code, "internal");
}

}  // namespace
}  // namespace weft::control
