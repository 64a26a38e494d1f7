#!/usr/bin/env bash
# Configures and builds the fuzz build (clang, ASan + UBSan, libFuzzer) in build-fuzz/ and runs
# every fuzz target for SECONDS each (default 30) from its corpus in tests/fuzz/corpus/, plus the
# check that the real encoders' seeds still decode. Fails on any crash, uncaught exception,
# sanitizer report, input slower than 5 s or larger than 2 GiB of memory. What a failing
# target found is in build-fuzz/tests/fuzz/artifacts/<target>/.
#
#   tests/fuzz/run_fuzz.sh [--with-open] [SECONDS]
#   WEFT_FUZZ_BUILD_DIR=dir WEFT_FUZZ_JOBS=n tests/fuzz/run_fuzz.sh
# --with-open also fuzzes the targets with an open finding (README.md, "Open"), which fail.
set -euo pipefail

labels='^fuzz$'
if [[ "${1:-}" == "--with-open" ]]; then
  labels='^fuzz(_open)?$'
  shift
fi
seconds="${1:-30}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "usage: $0 [--with-open] [SECONDS per target, a positive integer]" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${WEFT_FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${WEFT_FUZZ_JOBS:-$(nproc)}"

for tool in clang clang++ cmake ctest; do
  if ! command -v "$tool" > /dev/null; then
    echo "run_fuzz.sh: $tool not found (Debian: apt-get install clang libclang-rt-14-dev cmake)" >&2
    exit 2
  fi
done

mkdir -p "$build"
cmake -S "$root" -B "$build" -DWEFT_FUZZ=ON -DWEFT_FUZZ_SECONDS="$seconds" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_EXAMPLES=OFF -DWEFT_WITH_CUDA=OFF > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target weft_fuzz_targets -j "$jobs"
# Each target is single-threaded: $jobs at a time, each on a core of its own, for its full
# SECONDS; at most 2 GiB each (-rss_limit_mb).
ctest --test-dir "$build" -L "$labels" --output-on-failure -j "$jobs"
