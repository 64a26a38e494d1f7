#!/usr/bin/env bash
# Quick start: installs the dependencies, builds Weft, and runs the main example — an agent
# fleet of stateful actors dispatching tool tasks — on 4 MPI ranks of this machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
WEFT_BUILD_DIR="${WEFT_BUILD_DIR:-$root/build}" "$root/scripts/build.sh"
exec "$root/launchers/weft-run" -n 4 -- "${WEFT_BUILD_DIR:-$root/build}/examples/apps/agent_fleet/agent_fleet" "$@"
