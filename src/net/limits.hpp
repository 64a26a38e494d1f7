// Limits of the transport's public contract (shared by transport.hpp and the wire format).
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::net {

// Message types at or above this are the transport's own; the runtime uses the range below.
inline constexpr uint16_t kFirstReservedType = 0xFF00;
// The one reserved type on the wire: requests of the MPI bulk fallback (mpi_bulk.hpp), sent by
// the transport itself so that an idle holder wakes as for any message.
inline constexpr uint16_t kBulkMessageType = kFirstReservedType + 1;
// Largest single message (a fragment header carries a 32-bit total).
inline constexpr size_t kMaxMessageBytes = (size_t{1} << 32) - 1;

}  // namespace weft::net
