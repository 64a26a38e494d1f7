#!/usr/bin/env bash
# Quick start: installs the dependencies, builds Weft, and runs the main example — an agent
# fleet of stateful actors dispatching tool tasks — on 4 MPI ranks of this machine.
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
WEFTDEV_BUILD_DIR="${WEFTDEV_BUILD_DIR:-$root/build}" "$root/scripts/build.sh"
exec "$root/launchers/weft-run" -n 4 -- "${WEFTDEV_BUILD_DIR:-$root/build}/examples/apps/agent_fleet/agent_fleet" "$@"
