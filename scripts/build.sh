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
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
