// Small helpers shared by the device tests: device buffers that free themselves and CUDA checks
// that fail the test with the call's text.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace weft::gpu::testing {

#define WEFT_CUDA_OK(call)                                                     \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    ASSERT_EQ(err_, cudaSuccess) << #call << ": " << cudaGetErrorString(err_); \
  } while (0)

// One device allocation of `n` floats on the current device.
class DeviceFloats {
 public:
  explicit DeviceFloats(size_t n) : n_(n) {
    if (cudaMalloc(&p_, n * sizeof(float)) != cudaSuccess) p_ = nullptr;
  }
  ~DeviceFloats() {
    if (p_) cudaFree(p_);
  }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* get() const { return p_; }
  size_t size() const { return n_; }
  bool upload(const std::vector<float>& v) {
    return cudaMemcpy(p_, v.data(), n_ * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess;
  }
  std::vector<float> download() const {
    std::vector<float> v(n_);
    if (cudaMemcpy(v.data(), p_, n_ * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
      v.clear();
    }
    return v;
  }

 private:
  float* p_ = nullptr;
  size_t n_;
};

// An owned CUDA stream on the current device.
class Stream {
 public:
  Stream() {
    if (cudaStreamCreate(&s_) != cudaSuccess) s_ = nullptr;
  }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

}  // namespace weft::gpu::testing
