#!/usr/bin/env bash
# Configures and builds Weft in ./build (or $WEFTDEV_BUILD_DIR). Extra arguments go to CMake.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# WEFT_* names are Weft's runtime settings (an unknown one stops every Weft program); the build
# folder was WEFT_BUILD_DIR before, and that spelling is still taken here, with a note.
if [[ -n "${WEFT_BUILD_DIR:-}" ]]; then
  echo "$(basename "$0"): WEFT_BUILD_DIR is now WEFTDEV_BUILD_DIR; using ${WEFT_BUILD_DIR}" >&2
  export WEFTDEV_BUILD_DIR="${WEFTDEV_BUILD_DIR:-$WEFT_BUILD_DIR}"
  unset WEFT_BUILD_DIR
fi
build="${WEFTDEV_BUILD_DIR:-$root/build}"
# -O2 with line tables only (-g1): backtraces, perf and callgrind keep every function, file and
# line, inlined frames too; only a debugger's local variables go, and the heaviest files compile
# in 30 % less time (tests/unit/serde/roundtrip_test.cpp: 33 s at -g, 23 s at -g1). For locals,
# pass -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g -DNDEBUG" (later arguments win) or a Debug build.
# A sanitizer build compiles at -O1 -g1 whatever this says (cmake/WeftSanitize.cmake).
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
