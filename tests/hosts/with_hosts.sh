#!/usr/bin/env bash
# Runs one command with N namespace hosts up, and removes them on every way out:
#   with_hosts.sh [--hosts N] [--timeout S] -- CMD [ARGS...]
# CMD sees WEFTDEV_HOSTS_STATE (so `hosts.sh exec h1 …`, `hosts.sh kill-host h2` … work) and
# WEFTDEV_HOSTS_SH (this folder's hosts.sh). Exits with CMD's status; 77 (CTest SKIP_RETURN_CODE) with
# the reason when this machine cannot make namespace hosts; 124 when CMD ran past S seconds
# (default 600: below CTest's TIMEOUT, so that this script, not CTest's SIGKILL, ends the run and
# the hosts are removed). Fails when anything of the run is left after `down`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
hosts_sh=$here/hosts.sh
n=2
limit=600
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) n=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: with_hosts.sh [--hosts N] [--timeout S] -- CMD..." >&2; exit 2 ;;
  esac
done
[ $# -ge 1 ] || { echo "with_hosts.sh: no command" >&2; exit 2; }

skip() { echo "SKIP: namespace hosts cannot be made here: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
for t in ip unshare nsenter mount flock; do
  command -v $t >/dev/null || skip "'$t' is not installed (scripts/install-deps.sh installs iproute2, util-linux)"
done
probe=weft-probe-$$
r=$(ip netns add $probe 2>&1) || skip "'ip netns add' refused: $r"
ip netns del $probe
ip link add weftpb$$ type bridge 2>/dev/null || skip "cannot create a bridge (ip link add type bridge)"
ip link del weftpb$$

"$hosts_sh" sweep  # what runs killed before their trap left behind

export WEFTDEV_HOSTS_OWNER=$$  # the holders exit when this script does, whatever kills it
WEFTDEV_HOSTS_STATE=$("$hosts_sh" up "$n")
export WEFTDEV_HOSTS_STATE WEFTDEV_HOSTS_SH=$hosts_sh
id=$(cat "$WEFTDEV_HOSTS_STATE/id")
echo "[hosts] $n hosts up (run $id, state $WEFTDEV_HOSTS_STATE): $("$hosts_sh" list | tr '\n' ';')"

child=""
left=""
finish() {
  rc=$?
  trap - EXIT INT TERM
  if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    kill -TERM -- -"$child" 2>/dev/null || kill -TERM "$child" 2>/dev/null || true
    sleep 1
    kill -KILL -- -"$child" 2>/dev/null || true
  fi
  holders=$(cat "$WEFTDEV_HOSTS_STATE"/h*.holder 2>/dev/null || true)
  "$hosts_sh" down || rc=1
  for p in $holders; do
    [ -r /proc/$p/stat ] && [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ] &&
      [ "$(readlink /proc/$p/ns/net 2>/dev/null)" != "$(readlink /proc/self/ns/net)" ] &&
      left="$left holder $p" || true
  done
  left="${left:-}$(ip netns list | grep -- "weft-$id-" || true)$(ip -o link show | grep -E -- "(weftbr|wv)$id" || true)"
  if [ -n "$left" ]; then
    echo "[hosts] FAIL: run $id left behind: $left"
    rc=1
  else
    echo "[hosts] run $id removed: no namespace, link or holder left"
  fi
  exit $rc
}
trap finish EXIT
trap 'exit 143' INT TERM

# In the background (its own process group) so a signal to this script runs the trap at once.
set +e
setsid timeout --kill-after=10 "$limit" "$@" &
child=$!
wait "$child"
rc=$?
set -e
child=""
[ $rc -eq 124 ] && echo "[hosts] FAIL: '$*' ran past ${limit}s"
exit $rc
