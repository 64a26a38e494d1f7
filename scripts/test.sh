#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test (units, multi-rank
# runs under mpirun on loopback, the examples, a real local Slurm, GPU tests that skip without a
# GPU). This is what CI runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
WEFT_BUILD_DIR="${WEFT_BUILD_DIR:-$root/build}" "$root/scripts/build.sh" -DWEFT_BUILD_BENCH=OFF
cd "${WEFT_BUILD_DIR:-$root/build}"
# Loopback only, whatever the machine has.
export UCX_NET_DEVICES=lo OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
ctest --output-on-failure -j2 --timeout 600 "$@"
