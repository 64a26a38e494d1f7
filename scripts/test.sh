#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test (units, multi-rank
# runs under mpirun on loopback, the examples, a real local Slurm, GPU tests that skip without a
# GPU). This is what CI runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# WEFT_* names are Weft's runtime settings (an unknown one stops every Weft program); the build
# folder was WEFT_BUILD_DIR before, and that spelling is still taken here, with a note.
if [[ -n "${WEFT_BUILD_DIR:-}" ]]; then
  echo "$(basename "$0"): WEFT_BUILD_DIR is now WEFTDEV_BUILD_DIR; using ${WEFT_BUILD_DIR}" >&2
  export WEFTDEV_BUILD_DIR="${WEFTDEV_BUILD_DIR:-$WEFT_BUILD_DIR}"
  unset WEFT_BUILD_DIR
fi
"$root/scripts/install-deps.sh"
WEFTDEV_BUILD_DIR="${WEFTDEV_BUILD_DIR:-$root/build}" "$root/scripts/build.sh" -DWEFT_BUILD_BENCH=OFF
cd "${WEFTDEV_BUILD_DIR:-$root/build}"
# Loopback only, whatever the machine has.
export UCX_NET_DEVICES=lo OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
ctest --output-on-failure -j2 --timeout 600 "$@"
