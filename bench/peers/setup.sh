#!/usr/bin/env bash
# Creates the Python environment the peer benchmarks run in.
#
#   bench/peers/setup.sh [VENV_DIR]      (default: <repo>/build/peers-venv)
#
# Why this shape: mpi4py must be built against the same Open MPI as the `mpirun` on PATH, which
# Debian's python3-mpi4py is, and Debian's dask/matplotlib are tested together; so the venv sees
# the system site-packages and only Ray (not packaged by Debian) comes from PyPI. Where a Debian
# package is missing and apt is not usable, pip installs the package into the venv instead.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "${here}/../.." && pwd)"
venv="${1:-${repo}/build/peers-venv}"
# Debian's python (3.11) is the one Debian's mpi4py/dask were built for; Ray has wheels for it.
py="${WEFTDEV_PEERS_PYTHON:-/usr/bin/python3}"
# [client] brings grpcio, which `ray microbenchmark` (the cross-check) imports.
ray_spec="${WEFTDEV_PEERS_RAY_SPEC:-ray[client]==2.60.0}"

have_mod() { "$1" -c "import $2" >/dev/null 2>&1; }

missing_debs=()
have_mod "${py}" mpi4py || missing_debs+=(python3-mpi4py)
have_mod "${py}" distributed || missing_debs+=(python3-distributed)
have_mod "${py}" matplotlib || missing_debs+=(python3-matplotlib)
have_mod "${py}" venv || missing_debs+=(python3-venv)
if ((${#missing_debs[@]})) && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  echo "[peers-setup] apt-get install ${missing_debs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${missing_debs[@]}" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null 2>&1 &&
      apt-get install -y -q "${missing_debs[@]}" >/dev/null; } ||
    echo "[peers-setup] apt-get failed; falling back to pip for what is missing"
fi

if [[ ! -x "${venv}/bin/python" ]]; then
  echo "[peers-setup] creating ${venv}"
  "${py}" -m venv --system-site-packages "${venv}"
fi
vpy="${venv}/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1

if ! have_mod "${vpy}" ray || ! have_mod "${vpy}" grpc; then
  echo "[peers-setup] pip install ${ray_spec}"
  "${vpy}" -m pip install -q "${ray_spec}"
fi
have_mod "${vpy}" distributed || "${vpy}" -m pip install -q "dask[distributed]"
have_mod "${vpy}" matplotlib || "${vpy}" -m pip install -q matplotlib
have_mod "${vpy}" mpi4py || "${vpy}" -m pip install -q mpi4py

"${vpy}" - <<'PY'
import importlib
for m in ("ray", "dask", "distributed", "mpi4py", "matplotlib"):
    try:
        print(f"[peers-setup] {m} {importlib.import_module(m).__version__}")
    except Exception as e:  # reported, not fatal: the table records a peer that cannot run
        print(f"[peers-setup] {m} unavailable: {type(e).__name__}: {e}")
PY
