#!/usr/bin/env bash
# Real hosts on one machine (see README.md): each host is a network namespace with its own
# address on a private bridge, plus a holder process that owns the host's UTS and mount
# namespaces: its hostname, a private tmpfs /dev/shm, an /etc/hosts naming h1..hN, and a folder
# private to the host at a path every host shares ($WEFTDEV_HOSTS_STATE/host-tmp).
#
#   hosts.sh up N            make hosts h1..hN (prints the state folder to export)
#   hosts.sh down            remove everything `up` made (idempotent)
#   hosts.sh exec HOST CMD…  run CMD inside HOST (network, hostname, /dev/shm)
#   hosts.sh agent           path of the rsh agent for mpirun --mca plm_rsh_agent
#   hosts.sh mpirun-flags    the flags that pin mpirun and UCX to the hosts' subnet
#   hosts.sh list            HOST ADDRESS HOLDER-PID, one host a line
#   hosts.sh pids HOST       the PIDs of every process of HOST
#   hosts.sh kill-host HOST  SIGKILL every process of HOST (holder too) and drop its /dev/shm
#   hosts.sh restart-host HOST  a fresh holder for a killed HOST (new /dev/shm), link up
#   hosts.sh partition HOST  cut HOST's link (its bridge port down): peers see silence
#   hosts.sh heal HOST       bring HOST's link back
#   hosts.sh sweep           remove leftovers of runs whose owner process is gone
#
# Every command but `up` and `sweep` acts on the run named by $WEFTDEV_HOSTS_STATE (the folder
# `up` created); kill-host, partition, heal and pids also work when called inside a host. Names
# carry a per-run id, so concurrent runs never share a namespace, link or file; addresses exist only inside the namespaces (the bridge has none), so two runs using the
# same subnet cannot reach each other and nothing is routed off the machine. Needs root.
set -euo pipefail

SUBNET_PREFIX=10.213.7     # the hosts' own /24: host hI is $SUBNET_PREFIX.I
SUBNET=$SUBNET_PREFIX.0/24
IFACE=weft0                # the host's end of its veth, the same name in every host
REGISTRY=/run/weft-hosts   # one file per live run: its owner PID and state folder
MAX_HOSTS=32

die() { echo "hosts.sh: $*" >&2; exit 1; }

state() {
  [ -n "${WEFTDEV_HOSTS_STATE:-}" ] || die "WEFTDEV_HOSTS_STATE is not set (export what 'up' printed)"
  [ -f "$WEFTDEV_HOSTS_STATE/id" ] || die "$WEFTDEV_HOSTS_STATE is not a hosts state folder"
  S=$WEFTDEV_HOSTS_STATE
  ID=$(cat "$S/id")
  N=$(cat "$S/n")
}

# `ip` in the machine's network namespace, where the bridge and its ports are, also when called
# from inside a host (a test's driver on h1 partitioning h2): `up` pins that namespace to a file.
ip_machine() {
  if [ "$(readlink /proc/self/ns/net)" = "$(cat "$S/machine-netns")" ]; then ip "$@"
  else nsenter --net="$S/machine.net" ip "$@"; fi
}

ns_name() { echo "weft-$ID-$1"; }          # network namespace of host $1
bridge_name() { echo "weftbr$ID"; }        # 12 characters: under IFNAMSIZ
port_name() { echo "wv$ID${1}"; }          # the bridge's end of host $1's veth (wv<id>h2)

check_host() {
  [[ "$1" =~ ^h([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] && [ "${BASH_REMATCH[1]}" -le "$N" ] ||
    die "no host '$1' in this run (hosts are h1..h$N)"
}

holder_pid() {
  local f="$S/$1.holder"
  [ -f "$f" ] || die "host $1 is down (killed; 'restart-host $1' brings it back)"
  local pid; pid=$(cat "$f")
  [ -d "/proc/$pid" ] && [ "$(readlink "/proc/$pid/ns/net")" = "$(cat "$S/$1.netns-ino")" ] ||
    die "host $1 has lost its holder process ($pid)"
  echo "$pid"
}

# Starts host $1's holder: in its network namespace, new UTS and mount namespaces with the
# hostname, a tmpfs /dev/shm and the run's /etc/hosts. It exits when the run's owner dies, so a
# killed test cannot leave holders behind ('sweep' then removes the namespaces).
start_holder() {
  local h=$1 owner; owner=$(cat "$S/owner")
  rm -f "$S/$h.ready"
  rm -rf "${S:?}/$h.tmp"; mkdir -m 1777 "$S/$h.tmp"  # a restarted host starts with an empty one
  ip netns exec "$(ns_name "$h")" unshare -u -m --propagation private sh -c '
      set -e; hostname "$1"; mount -t tmpfs -o mode=1777 tmpfs /dev/shm
      mount --bind "$2/etc-hosts" /etc/hosts; mount --bind "$2/$1.tmp" "$2/host-tmp"
      . "$2/cgroup-mounts"
      touch "$2/$1.ready"
      if [ "$3" = 0 ]; then exec sleep infinity; fi
      while kill -0 "$3" 2>/dev/null; do sleep 2; done' holder "$h" "$S" "$owner" \
    </dev/null >/dev/null 2>"$S/$h.holder.log" &
  local pid=$! i
  for i in $(seq 100); do
    [ -f "$S/$h.ready" ] && break
    kill -0 "$pid" 2>/dev/null || die "holder of $h failed: $(cat "$S/$h.holder.log")"
    sleep 0.05
  done
  [ -f "$S/$h.ready" ] || die "holder of $h did not start"
  echo "$pid" >"$S/$h.holder"
  readlink "/proc/$pid/ns/net" >"$S/$h.netns-ino"
}

cmd_up() {
  local n=${1:-}
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le $MAX_HOSTS ] || die "usage: up N (1..$MAX_HOSTS)"
  [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
  for t in ip unshare nsenter mount; do command -v $t >/dev/null || die "$t is not installed"; done
  mkdir -p -m 0700 "$REGISTRY"
  # A state folder of our own (0700), and an id no live run holds.
  local base=${WEFTDEV_HOSTS_DIR:-${TMPDIR:-/tmp}}
  S=$(mktemp -d "$base/weft-hosts.XXXXXXXX")
  chmod 0700 "$S"
  while :; do
    ID=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
    (set -o noclobber; echo "${WEFTDEV_HOSTS_OWNER:-0} $S" >"$REGISTRY/$ID") 2>/dev/null || continue
    ip link show "$(bridge_name)" >/dev/null 2>&1 || break
    rm -f "$REGISTRY/$ID"  # a stale run without a registry entry holds this id
  done
  N=$n
  echo "$ID" >"$S/id"; echo "$N" >"$S/n"; echo "${WEFTDEV_HOSTS_OWNER:-0}" >"$S/owner"
  readlink /proc/self/ns/net >"$S/machine-netns"
  touch "$S/machine.net"
  mount --bind /proc/self/ns/net "$S/machine.net"  # before the holders, so that they see it
  export WEFTDEV_HOSTS_STATE=$S
  # Undo whatever was made when any step fails.
  UP_OK=0
  trap '[ "$UP_OK" = 1 ] || { echo "hosts.sh: up failed; removing what it made" >&2; cmd_down >/dev/null 2>&1 || true; }' EXIT
  {
    echo "127.0.0.1 localhost"
    for i in $(seq "$N"); do echo "$SUBNET_PREFIX.$i h$i"; done
  } >"$S/etc-hosts"
  chmod 0644 "$S/etc-hosts"
  mkdir -m 0755 "$S/host-tmp"  # each host mounts its own hI.tmp here (same path, own contents)
  write_agent
  write_cgroup_mounts
  local br; br=$(bridge_name)
  # IPv4 on the /24 only: no IPv6 link-local addresses (and their chatter) anywhere in the run.
  ip link add "$br" type bridge
  ip link set "$br" addrgenmode none
  ip link set "$br" up
  for i in $(seq "$N"); do
    local h=h$i ns; ns=$(ns_name "h$i")
    ip netns add "$ns"
    ip netns exec "$ns" sh -c 'for f in all default; do
        [ ! -w /proc/sys/net/ipv6/conf/$f/disable_ipv6 ] || echo 1 >/proc/sys/net/ipv6/conf/$f/disable_ipv6
      done'
    ip link add "$(port_name "$h")" type veth peer name "wp$ID$h"
    ip link set "$(port_name "$h")" addrgenmode none
    ip link set "wp$ID$h" netns "$ns"
    ip -n "$ns" link set "wp$ID$h" name $IFACE
    ip -n "$ns" addr add "$SUBNET_PREFIX.$i/24" dev $IFACE
    ip -n "$ns" link set lo up
    ip -n "$ns" link set $IFACE up
    ip link set "$(port_name "$h")" master "$br"
    ip link set "$(port_name "$h")" up
    start_holder "$h"
  done
  UP_OK=1
  echo "$S"
}

write_agent() {
  # mpirun calls AGENT HOST COMMAND...; the command is a shell line (orted with its environment).
  cat >"$S/agent" <<EOF
#!/bin/sh
# rsh agent for mpirun --mca plm_rsh_agent: runs a command line inside one of this run's hosts.
h=\$1; shift
case "\$h" in h[0-9]*) ;; *) echo "weft hosts agent: unknown host '\$h'" >&2; exit 255;; esac
f="$S/\$h.holder"
[ -f "\$f" ] || { echo "weft hosts agent: host \$h is down" >&2; exit 255; }
exec nsenter -t "\$(cat "\$f")" -n -u -m -- sh -c "\$*"
EOF
  chmod 0755 "$S/agent"
}

# `ip netns exec` mounts a fresh /sys for the namespace (so /sys/class/net shows the host's own
# interfaces), which hides the machine's /sys/fs/cgroup; slurmd refuses to start without it. The
# holder mounts the same cgroup hierarchies again (same hierarchies, so the same tree).
write_cgroup_mounts() {
  awk '$2 == "/sys/fs/cgroup" && $3 == "tmpfs" { print "mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup" }
       $2 ~ "^/sys/fs/cgroup" && ($3 == "cgroup" || $3 == "cgroup2") {
         print "mkdir -p " $2 " && mount -t " $3 " -o " $4 " " $3 " " $2 " || true" }' \
    /proc/self/mounts >"$S/cgroup-mounts"
}

cmd_down() {
  state
  local i h pid
  for i in $(seq "$N"); do
    h=h$i
    if [ -f "$S/$h.holder" ]; then
      pid=$(cat "$S/$h.holder")
      if [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" = "$(cat "$S/$h.netns-ino")" ]; then
        kill -KILL "$pid" 2>/dev/null || true
        wait_gone "$pid"
      fi
    fi
    kill_host_procs "$h"
    ip netns del "$(ns_name "$h")" 2>/dev/null || true
    ip link del "$(port_name "$h")" 2>/dev/null || true  # deleting one end deletes the pair
  done
  ip link del "$(bridge_name)" 2>/dev/null || true
  umount "$S/machine.net" 2>/dev/null || true
  rm -f "$REGISTRY/$ID"
  rm -rf "$S"
}

# A process is gone once it has exited (a zombie holds no namespace any more).
alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
wait_gone() {
  local k
  for k in $(seq 100); do alive "$1" || return 0; sleep 0.05; done
  die "process $1 survives SIGKILL"
}

# The processes of host $1: those in its network namespace (one /proc scan, so it works from
# inside a host as well).
host_pids() {
  local ino p; ino=$(cat "$S/$1.netns-ino")
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/net" 2>/dev/null)" = "$ino" ] && echo "${p#/proc/}"
  done
  return 0
}

# SIGKILL every process of host $1 until none is left (they may be forking).
kill_host_procs() {
  local pids k
  [ -f "$S/$1.netns-ino" ] || return 0
  for k in $(seq 50); do
    pids=$(host_pids "$1")
    [ -z "$pids" ] && return 0
    kill -KILL $pids 2>/dev/null || true
    sleep 0.05
  done
  die "processes of $1 survive SIGKILL: $(host_pids "$1" | tr '\n' ' ')"
}

cmd_exec() {
  state
  local h=${1:-}; shift || true
  check_host "$h"
  [ $# -ge 1 ] || die "usage: exec HOST CMD..."
  local pid; pid=$(holder_pid "$h")
  exec nsenter -t "$pid" -n -u -m -- "$@"
}

cmd_list() {
  state
  local i pid
  for i in $(seq "$N"); do
    pid=$(cat "$S/h$i.holder" 2>/dev/null || echo down)
    echo "h$i $SUBNET_PREFIX.$i $pid"
  done
}

cmd_pids() {
  state
  check_host "$1"
  host_pids "$1"
}

cmd_kill_host() {
  state
  check_host "$1"
  # All at once: stop every process of the host, empty its /dev/shm, then SIGKILL them (holder
  # too; the tmpfs goes with the last process of its mount namespace).
  local pids; pids=$(host_pids "$1")
  [ -z "$pids" ] || kill -STOP $pids 2>/dev/null || true
  if [ -f "$S/$1.holder" ] && [ -d "/proc/$(cat "$S/$1.holder")" ]; then
    nsenter -t "$(cat "$S/$1.holder")" -m -- find /dev/shm -mindepth 1 -delete 2>/dev/null || true
  fi
  kill_host_procs "$1"
  rm -f "$S/$1.holder"
}

cmd_restart_host() {
  state
  check_host "$1"
  [ ! -f "$S/$1.holder" ] || die "host $1 is up (kill-host it first)"
  [ "$(readlink /proc/self/ns/net)" = "$(cat "$S/machine-netns")" ] ||
    die "restart-host runs in the machine's namespaces (the one 'up' ran in), not inside a host"
  kill_host_procs "$1"
  start_holder "$1"
  ip link set "$(port_name "$1")" up
}

cmd_partition() { state; check_host "$1"; ip_machine link set "$(port_name "$1")" down; }
cmd_heal() { state; check_host "$1"; ip_machine link set "$(port_name "$1")" up; }

cmd_mpirun_flags() {
  state
  echo "--allow-run-as-root --oversubscribe --bind-to none --mca plm_rsh_agent $S/agent" \
       "--mca btl self,vader,tcp --mca btl_tcp_if_include $SUBNET --mca oob_tcp_if_include $SUBNET" \
       "-x UCX_NET_DEVICES=$IFACE -x UCX_WARN_UNUSED_ENV_VARS=n"
}

# Leftovers of runs whose owner died without 'down' (a test killed by SIGKILL): the registry
# names each run's owner PID; a run whose owner is gone (and is not a manual run, owner 0) goes.
cmd_sweep() {
  [ -d "$REGISTRY" ] || return 0
  local f owner dir ns l k pids
  for f in "$REGISTRY"/*; do
    [ -f "$f" ] || continue
    read -r owner dir <"$f"
    [ "$owner" != 0 ] && ! kill -0 "$owner" 2>/dev/null || continue
    echo "hosts.sh: sweeping run $(basename "$f") (owner $owner gone)" >&2
    if [ -f "$dir/id" ]; then
      WEFTDEV_HOSTS_STATE=$dir cmd_down
    else  # the state folder is gone too: remove by name
      ID=$(basename "$f")
      for ns in $(ip netns list | awk '{print $1}' | grep "^weft-$ID-h" || true); do
        for k in 1 2 3 4 5; do
          pids=$(ip netns pids "$ns" 2>/dev/null || true)
          [ -z "$pids" ] && break
          kill -KILL $pids 2>/dev/null || true; sleep 0.1
        done
        ip netns del "$ns" || true
      done
      for l in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep "^wv$ID" || true); do
        ip link del "$l" 2>/dev/null || true
      done
      ip link del "weftbr$ID" 2>/dev/null || true
      rm -f "$f"
    fi
  done
}

cmd=${1:-}; shift || true
case "$cmd" in
  up) cmd_up "$@" ;;
  down) [ -n "${WEFTDEV_HOSTS_STATE:-}" ] && [ ! -d "$WEFTDEV_HOSTS_STATE" ] && exit 0; cmd_down ;;
  exec) cmd_exec "$@" ;;
  agent) state; echo "$S/agent" ;;
  mpirun-flags) cmd_mpirun_flags ;;
  subnet) echo "$SUBNET" ;;
  iface) echo "$IFACE" ;;
  list) cmd_list ;;
  pids) cmd_pids "${1:-}" ;;
  kill-host) cmd_kill_host "${1:-}" ;;
  restart-host) cmd_restart_host "${1:-}" ;;
  partition) cmd_partition "${1:-}" ;;
  heal) cmd_heal "${1:-}" ;;
  sweep) cmd_sweep ;;
  *) sed -n '2,24p' "$0" >&2; exit 2 ;;
esac
