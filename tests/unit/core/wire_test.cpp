// The message-body readers of src/core/wire.hpp: what a handler meets in a malformed body is a
// SerializationError that names the field, never a value that reads as something else.
#include "core/wire.hpp"

#include <gtest/gtest.h>

namespace weft::core {
namespace {

serde::Buffer error_body(uint8_t kind) {
  serde::Buffer b;
  WireWriter w(b);
  detail::ErrorInfo e;
  e.kind = detail::ErrorKind::kTask;
  e.rank = 2;
  e.type_name = "std::runtime_error";
  e.message = "boom";
  e.function = "f";
  put_error(w, e);
  b.data()[1] = static_cast<char>(kind);  // the kind follows the wire version
  return b;
}

TEST(Wire, AnErrorIsReadBackAsWritten) {
  const serde::Buffer b = error_body(static_cast<uint8_t>(detail::ErrorKind::kStoreFull));
  WireReader r(b.data(), b.size());
  const detail::ErrorInfo e = get_error(r);
  EXPECT_EQ(e.kind, detail::ErrorKind::kStoreFull);
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.message, "boom");
  EXPECT_EQ(e.function, "f");
}

// A failure whose kind is kNone would complete as a success where receivers test
// `kind != kNone`; an unknown kind would lose its type (found by tests/fuzz wire_messages).
TEST(Wire, AnErrorWithoutAKnownKindIsASerializationError) {
  for (uint8_t kind : {uint8_t{0}, uint8_t{8}, uint8_t{255}}) {
    const serde::Buffer b = error_body(kind);
    WireReader r(b.data(), b.size());
    try {
      get_error(r);
      ADD_FAILURE() << "kind " << int(kind) << " accepted";
    } catch (const SerializationError& e) {
      EXPECT_NE(std::string(e.what()).find("error kind " + std::to_string(kind)),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Wire, ATruncatedErrorIsASerializationError) {
  const serde::Buffer b = error_body(1);
  for (size_t n = 1; n < b.size(); ++n) {
    WireReader r(b.data(), n);
    EXPECT_THROW(get_error(r), SerializationError) << n << " bytes";
  }
}

}  // namespace
}  // namespace weft::core
