#!/usr/bin/env bash
# Installs Weft's build and test dependencies from Debian's packages (Debian 12). Idempotent:
# does nothing when everything is there. Needs root (or sudo).
set -euo pipefail
pkgs=(build-essential cmake pkg-config
      libopenmpi-dev openmpi-bin libucx-dev ucx-utils libhdf5-dev hdf5-tools libtbb-dev
      libboost-serialization-dev libboost-dev libgtest-dev libbenchmark-dev
      nlohmann-json3-dev libcli11-dev
      slurm-wlm munge libpmix-dev
      iproute2 iputils-ping python3 python3-prometheus-client)
# `install-deps.sh fuzz`: also clang and its runtimes (libFuzzer), for tests/fuzz/run_fuzz.sh.
if [[ "${1:-}" == "fuzz" ]]; then
  pkgs+=(clang libclang-rt-14-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "[weft] installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
