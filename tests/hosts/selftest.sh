#!/usr/bin/env bash
# The fixture's own test, run inside with_hosts.sh --hosts 3 (run A). Checks every promise of
# hosts.sh: hostnames, addresses and routes, private /dev/shm, the rsh agent and mpirun across
# hosts, partition/heal, kill-host/restart-host, a second concurrent run (B) that does not
# collide with A, an idempotent `down`, and `sweep` of a run whose owner died (C).
set -uo pipefail
H=${WEFTDEV_HOSTS_SH:?run me inside with_hosts.sh}
: "${WEFTDEV_HOSTS_STATE:?run me inside with_hosts.sh}"
A=$WEFTDEV_HOSTS_STATE
command -v ping >/dev/null || { echo "SKIP: ping is not installed (iputils-ping; scripts/install-deps.sh)"; exit 77; }
fails=0
ok() { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; fails=$((fails + 1)); }
check() {  # check "what" CMD...: passes when CMD succeeds
  local what=$1; shift
  if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi
}
check_not() {
  local what=$1; shift
  if "$@" >/dev/null 2>&1; then bad "$what"; else ok "$what"; fi
}
on() { WEFTDEV_HOSTS_STATE=$1 "$H" exec "${@:2}"; }          # on RUN HOST CMD...
reach() { on "$1" "$2" ping -c1 -W1 "$3"; }                   # reach RUN FROM ADDRESS
reach_soon() {  # the link may take a moment to come back
  local k
  for k in $(seq 20); do reach "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done
  return 1
}
nothing_left() {  # nothing_left ID HOLDER-PIDS...: no namespace, link, registry entry or holder
  local id=$1 p; shift
  ip netns list | grep -q -- "weft-$id-" && return 1
  ip -o link show | grep -qE -- "(weftbr|wv)$id" && return 1
  [ -e "/run/weft-hosts/$id" ] && return 1
  for p in "$@"; do
    [ -r "/proc/$p/stat" ] && [ "$(awk '{print $3}' "/proc/$p/stat")" != Z ] && return 1
  done
  return 0
}
prefix=10.213.7
dev_of() { on "$1" "$2" stat -c %d /dev/shm; }

echo "# hosts and their addresses"
for i in 1 2 3; do
  check "h$i is called h$i" test "$(on "$A" h$i hostname)" = "h$i"
  check "h$i has $prefix.$i/24 on weft0" sh -c "WEFTDEV_HOSTS_STATE=$A $H exec h$i ip -4 -o addr show weft0 | grep -q ' $prefix.$i/24 '"
  check "h$i routes only its /24 (no default route)" \
    test "$(on "$A" h$i ip -4 route show | awk '{print $1}' | sort -u | tr '\n' ' ')" = "$prefix.0/24 "
  check_not "h$i cannot route off the machine" on "$A" h$i ip route get 1.1.1.1
  check "h$i resolves h1..h3 (its /etc/hosts)" sh -c "WEFTDEV_HOSTS_STATE=$A $H exec h$i getent hosts h3 | grep -q '^$prefix.3 '"
done
check "the machine keeps its own hostname" test "$(hostname)" != h1

echo "# private /dev/shm"
d1=$(dev_of "$A" h1) d2=$(dev_of "$A" h2) d0=$(stat -c %d /dev/shm)
check "h1 and h2 have different /dev/shm ($d1, $d2)" test "$d1" != "$d2"
check "h1's /dev/shm is not the machine's" test "$d1" != "$d0"
check "h1's /dev/shm is a tmpfs" test "$(on "$A" h1 stat -f -c %T /dev/shm)" = tmpfs
on "$A" h1 sh -c 'echo x >/dev/shm/weft-selftest-mark'
check "h1 sees its own /dev/shm file" on "$A" h1 test -e /dev/shm/weft-selftest-mark
check_not "h2 does not see h1's /dev/shm file" on "$A" h2 test -e /dev/shm/weft-selftest-mark
check_not "the machine does not see h1's /dev/shm file" test -e /dev/shm/weft-selftest-mark

echo "# the rsh agent and mpirun"
agent=$(WEFTDEV_HOSTS_STATE=$A "$H" agent)
check "agent h2 runs a shell line in h2" test "$("$agent" h2 'echo $(hostname)-$((1+2))')" = h2-3
check_not "agent refuses an unknown host" "$agent" nosuchhost true
# shellcheck disable=SC2046
got=$(on "$A" h1 mpirun $(WEFTDEV_HOSTS_STATE=$A "$H" mpirun-flags) -H h1:1,h2:1,h3:1 -n 3 hostname 2>&1 | sort | tr '\n' ' ')
check "mpirun -H h1:1,h2:1,h3:1 runs one rank on each host ($got)" test "$got" = "h1 h2 h3 "

echo "# partition and heal"
check "h1 reaches h2" reach "$A" h1 $prefix.2
WEFTDEV_HOSTS_STATE=$A "$H" partition h2
check_not "partitioned: h1 cannot reach h2" reach "$A" h1 $prefix.2
check_not "partitioned: h2 cannot reach h3" reach "$A" h2 $prefix.3
check "partitioned: h1 still reaches h3" reach "$A" h1 $prefix.3
WEFTDEV_HOSTS_STATE=$A "$H" heal h2
check "healed: h1 reaches h2 again" reach_soon "$A" h1 $prefix.2
check "healed: h2 reaches h3 again" reach_soon "$A" h2 $prefix.3
on "$A" h1 "$H" partition h2  # from inside a host, as a test's driver on h1 would
check_not "partitioned from h1: h1 cannot reach h2" reach "$A" h1 $prefix.2
on "$A" h1 "$H" heal h2
check "healed from h1: h1 reaches h2 again" reach_soon "$A" h1 $prefix.2

echo "# kill-host and restart-host"
on "$A" h3 sh -c 'echo x >/dev/shm/weft-selftest-h3; (setsid sleep 1000 &); sleep 1000 & echo $!' \
  >"$A/selftest.pids" </dev/null &
sleep 0.5
"$agent" h3 'nohup sleep 1000 >/dev/null 2>&1 &'
victims=$(WEFTDEV_HOSTS_STATE=$A "$H" pids h3 | tr '\n' ' ')
check "h3 runs processes before the kill ($victims)" test "$(echo "$victims" | wc -w)" -ge 4
check "h3 has its /dev/shm file" on "$A" h3 test -e /dev/shm/weft-selftest-h3
WEFTDEV_HOSTS_STATE=$A "$H" kill-host h3
check "killed: no process of h3 remains" test -z "$(WEFTDEV_HOSTS_STATE=$A "$H" pids h3)"
still=""
# One read of each stat file: a process may finish exiting between a test of the file and a read.
for p in $victims; do
  state=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
  [ -n "$state" ] && [ "$state" != Z ] && still="$still $p"
done
check "killed: every PID h3 had is gone" test -z "$still"
check_not "killed: exec on h3 is refused" on "$A" h3 true
check_not "killed: the agent refuses h3" "$agent" h3 true
check "killed: h1 still reaches h2" reach "$A" h1 $prefix.2
WEFTDEV_HOSTS_STATE=$A "$H" restart-host h3
check "restarted: h3 is called h3" test "$(on "$A" h3 hostname)" = h3
check "restarted: h3's /dev/shm is empty (dropped with the host)" test -z "$(on "$A" h3 ls -A /dev/shm)"
check "restarted: h1 reaches h3" reach_soon "$A" h1 $prefix.3
"$agent" h3 'nohup sleep 1000 >/dev/null 2>&1 &'
on "$A" h1 "$H" kill-host h3  # from inside a host, as a test's driver on h1 would
check "killed from h1: no process of h3 remains" test -z "$(WEFTDEV_HOSTS_STATE=$A "$H" pids h3)"
check_not "restart-host inside a host is refused" on "$A" h1 "$H" restart-host h3
WEFTDEV_HOSTS_STATE=$A "$H" restart-host h3
check "restarted again: h3 is called h3" test "$(on "$A" h3 hostname)" = h3

echo "# a second run beside this one"
B=$(WEFTDEV_HOSTS_OWNER=$$ "$H" up 2)
trap '[ -d "$B" ] && WEFTDEV_HOSTS_STATE=$B "$H" down' EXIT
idA=$(cat "$A/id") idB=$(cat "$B/id")
holdersB=$(cat "$B"/h*.holder | tr '\n' ' ')
check "run B has its own id ($idA vs $idB)" test "$idA" != "$idB"
check "run B's h1 reaches its h2" reach "$B" h1 $prefix.2
check "run B's bridge holds only B's two ports" \
  test "$(ip -o link show master "weftbr$idB" | grep -c "wv$idB")" = 2
check_not "run B's h1 does not see run A's h1 /dev/shm file" on "$B" h1 test -e /dev/shm/weft-selftest-mark
check "B's h1 and A's h1 have different /dev/shm" test "$(dev_of "$B" h1)" != "$d1"
WEFTDEV_HOSTS_STATE=$B "$H" down
check "down removes run B (namespaces, links, holders)" nothing_left "$idB" $holdersB
check "down again is a no-op" env WEFTDEV_HOSTS_STATE="$B" "$H" down
check "run A is untouched: h1 reaches h2" reach "$A" h1 $prefix.2
check "run A is untouched: h2 is called h2" test "$(on "$A" h2 hostname)" = h2

echo "# sweep: a run whose owner died"
sleep 1000 &
owner=$!
C=$(WEFTDEV_HOSTS_OWNER=$owner "$H" up 2)
idC=$(cat "$C/id") holdersC=$(cat "$C"/h*.holder | tr '\n' ' ')
kill "$owner"; wait "$owner" 2>/dev/null
gone=1
for k in $(seq 40); do
  gone=1; for p in $holdersC; do [ -r "/proc/$p/stat" ] && [ "$(awk '{print $3}' "/proc/$p/stat")" != Z ] && gone=0; done
  [ $gone = 1 ] && break; sleep 0.25
done
check "run C's holders exit when their owner dies" test $gone = 1
"$H" sweep
check "sweep removes run C" nothing_left "$idC" $holdersC
check "sweep leaves run A alone" reach "$A" h1 $prefix.2

echo "# $fails failure(s)"
[ "$fails" -eq 0 ] && echo "HOSTS_SELFTEST PASS"
exit $((fails > 0))
