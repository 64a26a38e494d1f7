#!/usr/bin/env bash
# The weft CLI against a 4-rank job with 2 virtual nodes that is stuck on purpose
# (stuck_job.cpp): status names each pending item's reason, list filters, metrics parse as
# Prometheus text, bad requests are refused while the job goes on, no TCP listener, and the
# session directory goes at the clean exit.
HERE="$(cd "$(dirname "$0")" && pwd)"
source "$HERE/cli_lib.sh"

# Open MPI's TCP BTL listens on every address (0.0.0.0), btl_tcp_if_include or not; on one
# host shared memory carries MPI, so it is left out here and the listener check below sees what
# Weft and UCX open.
for i in "${!MPIFLAGS[@]}"; do [ "${MPIFLAGS[$i]}" = "self,vader,tcp" ] && MPIFLAGS[$i]="self,vader"; done
M="$ROOT/m1"
launch 4 "$M" WEFT_VIRTUAL_NODES=2
JOB=$LAST_PID
wait_file "$M/ready" 120 || { fail "the job never got ready"; cat "$M/out.log"; exit 1; }
SESS="$(ls -d "$ROOT"/weft-mpirun-* 2>/dev/null)"
[ "$(echo "$SESS" | wc -l)" = 1 ] && [ -d "$SESS" ] && pass "one session directory: $(basename "$SESS")" \
  || { fail "session directory: '$SESS'"; exit 1; }
[ "$(mode_of "$SESS")" = 700 ] && pass "session dir mode 0700" || fail "session dir mode $(mode_of "$SESS")"
[ "$(mode_of "$SESS/control.sock")" = 600 ] && pass "socket mode 0600" || fail "socket mode $(mode_of "$SESS/control.sock")"
[ "$(mode_of "$SESS/control.token")" = 600 ] && pass "token mode 0600" || fail "token mode"
[ -d "$SESS/node0/spill" ] && [ -d "$SESS/node1/spill" ] && pass "both nodes' spill folders inside it" \
  || fail "spill folders: $(ls "$SESS")"

"$WEFT" status > "$M/status.txt" 2> "$M/status.err" || { fail "weft status exit $?"; cat "$M/status.err"; }
cp "$M/status.txt" "$ROOT/../weft-ops-last-status.txt" 2>/dev/null || true
expect_in "$M/status.txt" "4 ranks, 2 nodes" "status: ranks and nodes"
expect_in "$M/status.txt" "task use_special 'waiter'.*waiting for resource special: needs 1, 0 of 1 free on rank 0" \
  "status: the waiter waits for special, with how much is free"
expect_in "$M/status.txt" "task add_one 'after-holder'.*waiting for 1 argument" "status: a task waiting for its argument"
expect_in "$M/status.txt" "argument obj\\(0:[0-9]+\\), the result of task hold_special 'holder' on rank 0" \
  "status: which argument, and what produces it"
expect_in "$M/status.txt" "task use_special 'impossible': .*nosuch" "status: the infeasible task with the missing resource"
expect_in "$M/status.txt" "group [0-9]+ 'wants-special'  PENDING: .*special" "status: the pending group with its reason"
expect_in "$M/status.txt" "rank 0 .*used .*special=1" "status: rank 0 uses its special"

"$WEFT" status --json > "$M/status.json" && python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['job']['ranks']==4 and j['job']['nodes']==2" "$M/status.json" \
  && pass "status --json parses" || fail "status --json"

"$WEFT" list tasks --filter reason=resource > "$M/l1.txt" || fail "list tasks exit"
expect_in "$M/l1.txt" "what=use_special 'waiter'" "list tasks --filter reason=resource: the waiter"
expect_in "$M/l1.txt" "^\\(1 rows\\)" "list tasks --filter reason=resource: only it"
"$WEFT" list tasks --limit 1 > "$M/l2.txt"; expect_in "$M/l2.txt" "^\\(1 rows\\)" "list --limit 1"
"$WEFT" list placement-groups --filter state=PENDING --json > "$M/l3.json"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert len(r)==1 and r[0]['name']=='wants-special', r" "$M/l3.json" \
  && pass "list placement-groups --filter state=PENDING --json" || fail "list placement-groups"
"$WEFT" list nodes > "$M/l4.txt"; expect_in "$M/l4.txt" "^\\(2 rows\\)" "list nodes: 2"
"$WEFT" list objects --filter status=pending > "$M/l5.txt"; expect_in "$M/l5.txt" "status=pending" "list objects"
"$WEFT" list tasks --filter nokey > "$M/l6.txt" 2>&1; [ $? = 2 ] && pass "a --filter without = is refused" || fail "--filter nokey"

"$WEFT" metrics > "$M/metrics.txt" || fail "weft metrics exit"
python3 "$HERE/prom_check.py" --require weft_tasks_submitted_total --require weft_store_used_bytes \
  --require weft_pending_items --require weft_messages_sent_total < "$M/metrics.txt" \
  && pass "metrics parse as Prometheus text" || fail "metrics:"
expect_in "$M/metrics.txt" '^weft_tasks_infeasible_total\{rank="0"\} 1$' "metrics: one infeasible task"
expect_in "$M/metrics.txt" '^weft_ranks\{state="alive"\} 4$' "metrics: 4 ranks alive"

for k in wrong_token malformed oversize bad_version unknown_command silent; do
  want="$k"; [ "$k" = wrong_token ] && want=bad_token; [ "$k" = silent ] && want=timeout
  got="$(python3 "$HERE/control_request.py" "$SESS" "$k" 2>/dev/null)"
  [ "$got" = "$want" ] && pass "a $k request is refused ($got)" || fail "$k: got '$got'"
done
[ "$(python3 "$HERE/control_request.py" "$SESS" good)" = ok ] && pass "after them a good request is answered" \
  || fail "good request after the bad ones"
[ "$(python3 "$HERE/control_request.py" "$SESS" metrics)" = ok ] \
  && pass "a metrics request has the figures and no per-object list" || fail "metrics request"
"$WEFT" status --session "$SESS" > /dev/null && pass "--session DIR" || fail "--session DIR"
"$WEFT" status --job "$(basename "$SESS" | sed 's/.*-//')" > /dev/null && pass "--job PID" || fail "--job PID"
"$WEFT" status --job 1 > /dev/null 2> "$M/nojob.err"; expect_in "$M/nojob.err" "no running Weft job with job id or rank-0 PID 1" "--job of no job says so"

if command -v ss > /dev/null; then
  ss -lntpH > "$M/ss.txt" 2>&1
  APPPIDS="$(pgrep -x "$(basename "$APP" | cut -c1-15)" | tr '\n' '|' | sed 's/|$//')"  # ranks, not mpirun
  # Listeners of the ranks (not mpirun's own daemon) on an address other than loopback.
  grep -E "pid=($APPPIDS)," "$M/ss.txt" | awk '{print $4}' | grep -Ev '^(127\.[0-9.]+|\[::1\]|\[::ffff:127\.[0-9.]+\]):[0-9]+$' > "$M/open.txt"
  if [ -z "$APPPIDS" ]; then
    fail "no rank processes found for the listener check"
  elif [ -s "$M/open.txt" ]; then
    fail "a rank listens beyond loopback:"; grep -E "pid=($APPPIDS)," "$M/ss.txt"
  else
    pass "no TCP listener of the ranks outside loopback (ss -lntp: $(grep -cE "pid=($APPPIDS)," "$M/ss.txt") on loopback, from UCX)"
  fi
else
  echo "skip: ss is not installed"
fi

touch "$M/release"
wait "$JOB"; rc=$?
[ "$rc" = 0 ] && pass "the job ends well (every result right)" || { fail "job exit $rc"; tail -20 "$M/out.log"; }
[ ! -e "$SESS" ] && pass "the session directory is removed at the clean exit" || fail "left: $(ls -R "$SESS")"
[ -z "$(ls -d "$ROOT"/weft-* 2>/dev/null)" ] && pass "nothing weft-* left in TMPDIR" || fail "left: $(ls "$ROOT")"
echo "$FAILS failure(s)"
[ "$FAILS" = 0 ]
