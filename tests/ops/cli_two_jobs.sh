#!/usr/bin/env bash
# Two stuck jobs at once (2 ranks each): disjoint session directories, weft refuses to guess
# and names both, --session and --job pick one, and both folders go when the jobs end; then
# `weft clean` removes a dead job's folder and leaves a live one's.
HERE="$(cd "$(dirname "$0")" && pwd)"
source "$HERE/cli_lib.sh"

launch 2 "$ROOT/m1"; J1=$LAST_PID
launch 2 "$ROOT/m2"; J2=$LAST_PID
wait_file "$ROOT/m1/ready" 120 && wait_file "$ROOT/m2/ready" 120 || { fail "jobs not ready"; cat "$ROOT"/m*/out.log; exit 1; }
mapfile -t SESS < <(ls -d "$ROOT"/weft-mpirun-*)
[ "${#SESS[@]}" = 2 ] && [ "${SESS[0]}" != "${SESS[1]}" ] && pass "two disjoint session directories: $(basename "${SESS[0]}") $(basename "${SESS[1]}")" \
  || { fail "sessions: ${SESS[*]}"; exit 1; }
T0="$(cat "${SESS[0]}/control.token")"; T1="$(cat "${SESS[1]}/control.token")"
[ "$T0" != "$T1" ] && pass "each job has its own token" || fail "the tokens are equal"

"$WEFT" status > "$ROOT/guess.out" 2> "$ROOT/guess.err"; rc=$?
[ "$rc" = 1 ] && pass "weft without --session or --job refuses to guess" || fail "exit $rc"
expect_in "$ROOT/guess.err" "2 running Weft jobs" "it says how many"
expect_in "$ROOT/guess.err" "$(basename "${SESS[0]}")" "it names the first"
expect_in "$ROOT/guess.err" "$(basename "${SESS[1]}")" "it names the second"
for s in "${SESS[@]}"; do
  "$WEFT" status --session "$s" > "$ROOT/s.txt" || fail "status --session $s"
  expect_in "$ROOT/s.txt" "job $s: 2 ranks" "--session $(basename "$s")"
  job="$(basename "$s" | sed -E 's/^weft-mpirun-([^-]+)-[0-9]+$/\1/')"
  "$WEFT" status --job "$job" > "$ROOT/j.txt" || fail "status --job $job"
  expect_in "$ROOT/j.txt" "job $s: " "--job $job (the mpirun job id)"
done
# A request with the other job's token is refused.
python3 - "${SESS[0]}" "$T1" > "$ROOT/x.txt" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1] + "/control.sock")
s.sendall((json.dumps({"version": 1, "token": sys.argv[2], "command": "snapshot"}) + "\n").encode())
s.shutdown(socket.SHUT_WR)
d = b""
while True:
    c = s.recv(65536)
    if not c: break
    d += c
print(json.loads(d)["code"])
PY
expect_in "$ROOT/x.txt" "^bad_token$" "one job's token does not open the other"

# weft clean: a folder named for a dead rank 0 goes, a live job's stays.
DEAD="$ROOT/weft-mpirun-999-$(( $(cat /proc/sys/kernel/pid_max) - 1 ))"
mkdir -m 700 -p "$DEAD/node0/spill"
"$WEFT" clean --dry-run > "$ROOT/c0.txt"; expect_in "$ROOT/c0.txt" "would remove $DEAD" "clean --dry-run names the dead job's folder"
[ -d "$DEAD" ] && pass "--dry-run removes nothing" || fail "--dry-run removed it"
"$WEFT" clean > "$ROOT/c1.txt"
expect_in "$ROOT/c1.txt" "removed $DEAD" "clean removes the dead job's folder"
[ ! -e "$DEAD" ] && [ -d "${SESS[0]}" ] && [ -d "${SESS[1]}" ] && pass "and leaves the live ones" || fail "clean: $(ls "$ROOT")"

touch "$ROOT/m1/release" "$ROOT/m2/release"
wait "$J1"; r1=$?; wait "$J2"; r2=$?
[ "$r1" = 0 ] && [ "$r2" = 0 ] && pass "both jobs end well" || { fail "exits $r1 $r2"; tail "$ROOT"/m*/out.log; }
[ ! -e "${SESS[0]}" ] && [ ! -e "${SESS[1]}" ] && pass "both session directories are removed" || fail "left: $(ls "$ROOT")"
echo "$FAILS failure(s)"
[ "$FAILS" = 0 ]
