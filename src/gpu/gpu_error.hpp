// The GPU module's errors. They derive from weft::Error so the runtime can let them reach users
// unchanged (a gang that cannot form is the user's problem to see, with the member and device).
#pragma once

#include <chrono>
#include <string>

#include "weft/errors.hpp"

namespace weft::gpu {

// No usable GPU where one was asked for: built without CUDA, no driver, device index out of range.
class GpuError : public Error {
 public:
  using Error::Error;
};

// An NCCL gang could not be formed or failed: bad arguments, NCCL init error, init timeout.
// Carries who failed and how long it waited, so a hung member is easy to find in a large job.
class GangError : public GpuError {
 public:
  GangError(const std::string& what, int member, int gang_size, int device,
            std::chrono::milliseconds elapsed)
      : GpuError(what),
        member_(member),
        gang_size_(gang_size),
        device_(device),
        elapsed_(elapsed) {}
  int member() const { return member_; }
  int gang_size() const { return gang_size_; }
  int device() const { return device_; }
  std::chrono::milliseconds elapsed() const { return elapsed_; }

 private:
  int member_, gang_size_, device_;
  std::chrono::milliseconds elapsed_;
};

}  // namespace weft::gpu
