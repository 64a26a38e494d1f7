#!/usr/bin/env bash
# Builds Weft's GPU module with CUDA/NCCL and runs every GPU test (CTest label "gpu": the units of
# tests/unit/gpu, the device tests, the 2-rank NCCL gang test and, in a full build, gpu.runtime:
# real device ids through the runtime and weft::nccl_gang over actors) on a machine with GPUs.
#
#   tests/gpu/run_gpu_tests.sh [build-dir]        default build-dir: <repo>/build-gpu-cuda
#
# Environment:
#   WEFTDEV_GPU_TEST_MINIMAL=1  configure only common + gpu and their tests, for GPU hosts without the
#                            rest of Weft's dependencies (TBB, Boost, HDF5, UCX). Also used
#                            automatically when the full configure fails.
#   CUDAToolkit_ROOT, NCCL_HOME  where CUDA and NCCL live when not under /usr/local/cuda.
#   JOBS                     parallel build jobs (default: nproc).
# All traffic stays on loopback: NCCL bootstraps over lo and does not use InfiniBand.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build-gpu-cuda}
jobs=${JOBS:-$(nproc)}
export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 UCX_NET_DEVICES=lo

if command -v nvidia-smi > /dev/null; then
  nvidia-smi -L || true
else
  echo "run_gpu_tests: nvidia-smi not found; the device tests will report 'skipped' without a GPU"
fi

configure_full() {
  cmake -S "$root" -B "$build" -DWEFT_WITH_CUDA=ON -DWEFT_BUILD_EXAMPLES=OFF -DWEFT_BUILD_BENCH=OFF
}

# A source tree made of links to the GPU module, its one dependency (common) and its tests, with
# a top level that finds only what they need. MPI is optional there (the gang test needs it).
configure_minimal() {
  local src=$build/minimal-src
  build=$build/minimal
  mkdir -p "$src/src" "$src/tests/unit"
  ln -sfn "$root/cmake" "$src/cmake"
  ln -sfn "$root/include" "$src/include"
  ln -sfn "$root/src/common" "$src/src/common"
  ln -sfn "$root/src/gpu" "$src/src/gpu"
  ln -sfn "$root/tests/unit/gpu" "$src/tests/unit/gpu"
  ln -sfn "$root/tests/gpu" "$src/tests/gpu"
  cat > "$src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(WeftGpuOnly LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(WEFT_WITH_CUDA "ON" CACHE STRING "")
list(APPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_SOURCE_DIR}/cmake)
find_package(Threads REQUIRED)
find_package(MPI COMPONENTS C CXX)
include(WeftTesting)
find_package(GTest REQUIRED)
include(GoogleTest)
enable_testing()
add_subdirectory(src/common)
add_subdirectory(src/gpu)
add_subdirectory(tests/unit/gpu)
add_subdirectory(tests/gpu)
CMAKE
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
}

if [[ ${WEFTDEV_GPU_TEST_MINIMAL:-0} == 1 ]]; then
  configure_minimal
elif ! configure_full; then
  echo "run_gpu_tests: the full configure failed; building the GPU module alone"
  configure_minimal
fi

cmake --build "$build" --target weft_gpu_unit_tests weft_gpu_device_tests -j "$jobs"
# The 2-rank gang test exists only where MPI was found.
# The runtime-level test (weft::nccl_gang over actors) exists only in a full build.
if [[ $build != */minimal ]] && ! cmake --build "$build" --target weft_gpu_runtime_tests -j "$jobs"; then
  echo "run_gpu_tests: WARNING: weft_gpu_runtime_tests not built; running the rest"
fi
if ! cmake --build "$build" --target weft_gpu_gang_mpi_tests -j "$jobs"; then
  echo "run_gpu_tests: WARNING: weft_gpu_gang_mpi_tests not built (MPI missing?); running the rest"
fi
ctest --test-dir "$build" -L gpu --output-on-failure --timeout 300
