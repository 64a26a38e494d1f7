#!/usr/bin/env bash
# Runs an MPI job across the namespace hosts of the current run (inside with_hosts.sh):
#   mpirun_on_hosts.sh HOSTS NP [MPIRUN-ARGS...] -- CMD [ARGS...]
# e.g. mpirun_on_hosts.sh h1:2,h2:2 4 -- ./weft_multirank_tests. mpirun itself runs in h1 and
# reaches the other hosts through the fixture's rsh agent; out-of-band, MPI and UCX traffic is
# pinned to the hosts' subnet and interface (hosts.sh mpirun-flags). Every WEFT_* and WEFTDEV_*
# variable of this environment is passed to the ranks with -x (the agent carries mpirun's whole
# environment to the other hosts anyway).
set -euo pipefail
hosts_sh="$(cd "$(dirname "$0")" && pwd)/hosts.sh"
usage="usage: mpirun_on_hosts.sh HOSTS NP [MPIRUN-ARGS...] -- CMD..."
[ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
spec=$1 np=$2
shift 2
extra=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do extra+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || { echo "mpirun_on_hosts.sh: no command" >&2; exit 2; }
# shellcheck disable=SC2207
flags=($("$hosts_sh" mpirun-flags))
for v in $(env | grep -oE '^WEFT(DEV)?_[A-Z0-9_]*=' | tr -d = | grep -v '^WEFTDEV_HOSTS_' || true); do
  flags+=(-x "$v")
done
echo "[hosts] mpirun -H $spec -n $np ${extra[*]} $*"
exec "$hosts_sh" exec h1 env UCX_NET_DEVICES="$("$hosts_sh" iface)" OMPI_MCA_rmaps_base_oversubscribe=1 \
  mpirun "${flags[@]}" -H "$spec" -n "$np" "${extra[@]}" "$@"
