#!/usr/bin/env bash
# The weft CLI against a 4-rank job with 2 virtual nodes that is stuck on purpose
# (stuck_job.cpp): status names each pending item's reason, list filters, metrics parse as
# Prometheus text, bad requests are refused while the job goes on, no TCP listener, and the
# session directory goes at the clean exit. Rank 0 gathers every rank's part: a task waiting at
# rank 3's gate for rank 3's resource, tasks running on ranks 0 and 3. The timeline parses as a
# Chrome trace with the warm-up tasks on every rank; --watch redraws with a progress bar;
# metrics --output rewrites a file until the job ends; logs shows every rank's log. A second run
# with --weft-keep-session leaves its final state, timeline and logs for --from.
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
expect_in "$M/status.txt" "task use_special 'impossible' \\[rank 0\\]: .*nosuch" "status: the infeasible task with the missing resource"
expect_in "$M/status.txt" "task use_other 'inner-waiter'  \\[gate of rank 3\\]  waiting for resource other: needs 1, 0 of 1 free on rank 3" \
  "status: a task another rank submitted waits at rank 3's gate, with rank 3's reason (gathered)"
expect_in "$M/status.txt" "task outer 'outer'  running on rank 3 \\(submitted by rank 0\\)" "status: a task running on rank 3"
expect_in "$M/status.txt" "task hold_special 'holder'  running on rank 0" "status: the holder runs on rank 0"
expect_in "$M/status.txt" "rank 3  node 1 .*used other=1.0  queued 1  running 1" "status: rank 3's own use, queue and running count"
expect_in "$M/status.txt" "submitted by rank:.* 3: 1" "status: rank 3 submitted one task"
grep -q "ranks that gave no state" "$M/status.txt" && fail "a rank did not answer" || pass "every rank answered"
expect_in "$M/status.txt" "group [0-9]+ 'wants-special'  PENDING: .*special" "status: the pending group with its reason"
expect_in "$M/status.txt" "rank 0 .*used .*special=1" "status: rank 0 uses its special"

"$WEFT" status --json > "$M/status.json" && python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['job']['ranks']==4 and j['job']['nodes']==2" "$M/status.json" \
  && pass "status --json parses" || fail "status --json"

"$WEFT" list tasks --filter reason=resource > "$M/l1.txt" || fail "list tasks exit"
expect_in "$M/l1.txt" "what=use_special 'waiter'" "list tasks --filter reason=resource: the waiter"
expect_in "$M/l1.txt" "what=use_other 'inner-waiter'" "list tasks --filter reason=resource: the inner waiter"
expect_in "$M/l1.txt" "^\\(2 rows\\)" "list tasks --filter reason=resource: only those two"
"$WEFT" list tasks --filter gate_rank=3 > "$M/l1b.txt"
expect_in "$M/l1b.txt" "^\\(1 rows\\)" "list tasks --filter gate_rank=3: rank 3's queue"
"$WEFT" list tasks --filter reason=running > "$M/l1c.txt"
expect_in "$M/l1c.txt" "^\\(2 rows\\)" "list tasks --filter reason=running: the two running"
"$WEFT" list tasks --limit 1 > "$M/l2.txt"; expect_in "$M/l2.txt" "^\\(1 rows\\)" "list --limit 1"
"$WEFT" list placement-groups --filter state=PENDING --json > "$M/l3.json"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert len(r)==1 and r[0]['name']=='wants-special', r" "$M/l3.json" \
  && pass "list placement-groups --filter state=PENDING --json" || fail "list placement-groups"
"$WEFT" list nodes > "$M/l4.txt"; expect_in "$M/l4.txt" "^\\(2 rows\\)" "list nodes: 2"
"$WEFT" list objects --filter status=pending > "$M/l5.txt"; expect_in "$M/l5.txt" "status=pending" "list objects"
"$WEFT" list objects --filter owner=3 --json > "$M/l5b.json"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r and all(o['owner']==3 and 3 in o['known_by'] for o in r), r" "$M/l5b.json" \
  && pass "list objects: rank 3's own objects (gathered from rank 3)" || fail "list objects --filter owner=3: $(cat "$M/l5b.json")"

# The timeline: a Chrome trace with the warm-up tasks on every rank.
"$WEFT" timeline -o "$M/trace.json" > "$M/tl.txt" || fail "weft timeline exit"
expect_in "$M/tl.txt" "wrote .*trace.json: [0-9]+ spans of 4 ranks" "timeline: written, spans of 4 ranks"
python3 - "$M/trace.json" <<'PY' && pass "timeline: trace events parse; add_one 'warm-up' spans on ranks 0-3, named tracks" || fail "timeline content"
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
spans = [e for e in ev if e["ph"] == "X"]
assert all(isinstance(e["ts"], (int, float)) and e["dur"] >= 0 for e in spans)
warm = {e["pid"] for e in spans if e["name"] == "add_one 'warm-up'" and e["cat"] == "task"}
assert warm == {0, 1, 2, 3}, warm
names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert len(names) == 4 and all(n.startswith("rank ") for n in names), names
threads = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
assert "driver" in threads, threads
assert any(e["cat"] == "get" and e["pid"] == 0 for e in spans), "no get span of the driver"
PY

# status --watch redraws until stopped; into a file each refresh follows the last.
timeout 3 "$WEFT" status --watch --interval-ms 300 > "$M/watch.txt"
[ "$(grep -c "tasks finished" "$M/watch.txt")" -ge 2 ] && pass "status --watch: refreshed, with a progress line" \
  || fail "status --watch: $(head -5 "$M/watch.txt")"
expect_in "$M/watch.txt" "^\\[#+\\.*\\] [0-9]+/[0-9]+ tasks finished" "status --watch: a progress bar"

# metrics --output: a file rewritten until the job ends (checked after the end, below).
"$WEFT" metrics --output "$M/scrape.prom" --interval-ms 200 > /dev/null 2> "$M/scrape.err" &
SCRAPER=$!
wait_file "$M/scrape.prom" 20 && pass "metrics --output writes the file" || fail "metrics --output: no file"

# Every rank's log file, in the session directory.
"$WEFT" logs > "$M/logs.txt" || fail "weft logs exit"
for r in 0 1 2 3; do expect_in "$M/logs.txt" "==> rank $r " "logs: rank $r's log"; done
expect_in "$M/logs.txt" "\\[weft r3 I .*rank 3/4 up" "logs: a rank's info lines are in its file"
"$WEFT" logs --rank 2 > "$M/logs2.txt"; grep -q "weft r[013] " "$M/logs2.txt" && fail "logs --rank 2 shows other ranks" || pass "logs --rank 2: only rank 2"
"$WEFT" logs --rank 9 > /dev/null 2> "$M/logs9.err"; [ $? = 1 ] && pass "logs --rank 9: no such log, exit 1" || fail "logs --rank 9"
"$WEFT" list tasks --filter nokey > "$M/l6.txt" 2>&1; [ $? = 2 ] && pass "a --filter without = is refused" || fail "--filter nokey"

"$WEFT" metrics > "$M/metrics.txt" || fail "weft metrics exit"
python3 "$HERE/prom_check.py" --require weft_tasks_submitted_total --require weft_store_used_bytes \
  --require weft_pending_items --require weft_messages_sent_total < "$M/metrics.txt" \
  && pass "metrics parse as Prometheus text" || fail "metrics:"
# And with Prometheus's own Python parser: Debian's python3-prometheus-client (installed by
# scripts/install-deps.sh), so Debian's /usr/bin/python3 whatever python3 is first on PATH.
/usr/bin/python3 - "$M/metrics.txt" > "$M/promclient.txt" <<'PY' && pass "metrics parse with prometheus_client ($(cat "$M/promclient.txt"))" || fail "prometheus_client: $(cat "$M/promclient.txt")"
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
# The client strips _total from a counter's family name.
need = ["weft_tasks_submitted", "weft_store_used_bytes", "weft_pending_items", "weft_ranks"]
missing = [n for n in need if n not in fams]
if missing:
    print("missing families", missing); sys.exit(1)
alive = [s.value for s in fams["weft_ranks"].samples if s.labels.get("state") == "alive"]
if alive != [4.0]:
    print("weft_ranks{state=alive} is", alive); sys.exit(1)
print(len(fams), "families,", sum(len(f.samples) for f in fams.values()), "samples")
PY
expect_in "$M/metrics.txt" '^weft_tasks_infeasible_total\{rank="0"\} 1$' "metrics: one infeasible task"
expect_in "$M/metrics.txt" '^weft_ranks\{state="alive"\} 4$' "metrics: 4 ranks alive"
expect_in "$M/metrics.txt" '^weft_recycled_bytes\{rank="3"\} [0-9]+$' "metrics: the blocks rank 3 keeps for reuse"

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
wait "$SCRAPER"; rc=$?
[ "$rc" = 0 ] && pass "metrics --output ends with the job (exit 0)" || fail "metrics --output exit $rc: $(cat "$M/scrape.err")"
python3 "$HERE/prom_check.py" --require weft_tasks_submitted_total < "$M/scrape.prom" \
  && pass "the scraped file parses as Prometheus text" || fail "scraped file"

# A job run with --weft-keep-session: its folder stays with the final state, timeline and logs.
K="$ROOT/m2"
launch 4 "$K" WEFT_VIRTUAL_NODES=2 WEFT_KEEP_SESSION=1
KJOB=$LAST_PID
wait_file "$K/ready" 120 || { fail "the kept job never got ready"; cat "$K/out.log"; }
touch "$K/release"
wait "$KJOB"; rc=$?
[ "$rc" = 0 ] && pass "the kept job ends well" || { fail "kept job exit $rc"; tail -20 "$K/out.log"; }
KS="$(ls -d "$ROOT"/weft-mpirun-* 2>/dev/null)"
[ -d "$KS" ] && [ -f "$KS/final/state.json" ] && [ -f "$KS/final/timeline.json" ] \
  && pass "keep_session: $(basename "$KS") stays with final/state.json and final/timeline.json" \
  || fail "keep_session: $(ls -R "$ROOT" | head -20)"
[ ! -e "$KS/control.sock" ] && [ ! -e "$KS/node0/spill" ] && pass "keep_session: the socket and spill folders are gone" \
  || fail "keep_session left: $(ls "$KS")"
"$WEFT" status --from "$KS" > "$K/from.txt" || fail "status --from exit"
expect_in "$K/from.txt" "4 ranks, 2 nodes" "status --from DIR: the finished job"
expect_in "$K/from.txt" "tasks of every rank: 1[0-9] submitted, 1[0-9] finished" "status --from DIR: every task finished"
"$WEFT" list nodes --from "$KS" > "$K/from-nodes.txt"; expect_in "$K/from-nodes.txt" "^\\(2 rows\\)" "list --from DIR"
"$WEFT" timeline --from "$KS" -o "$K/trace.json" > "$K/tl.txt" && expect_in "$K/tl.txt" "spans of 4 ranks" "timeline --from DIR" \
  || fail "timeline --from exit"
"$WEFT" logs --from "$KS" --rank 3 > "$K/logs3.txt"; expect_in "$K/logs3.txt" "weft r3 " "logs --from DIR --rank 3"
"$WEFT" status --from "$ROOT" > /dev/null 2> "$K/from-bad.err"
expect_in "$K/from-bad.err" "final/state.json is not there: --from takes the session directory of a job run with --weft-keep-session" \
  "status --from a folder that is no kept session says what it needs"
"$WEFT" clean > /dev/null && [ ! -e "$KS" ] && pass "weft clean removes the kept session of the finished job" || fail "weft clean: $KS left"
echo "$FAILS failure(s)"
[ "$FAILS" = 0 ]
