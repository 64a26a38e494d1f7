// The typed NCCL communicator of a gang. Opt-in: include it only in code compiled where CUDA and
// NCCL are (it includes nccl.h); the rest of Weft's headers never do.
//   ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, weft::nccl_comm(gang), stream);
#pragma once

#include <nccl.h>

#include "weft/nccl_gang.hpp"

namespace weft {

inline ncclComm_t nccl_comm(const NcclGang& gang) {
  return static_cast<ncclComm_t>(gang.native_handle());
}

}  // namespace weft
