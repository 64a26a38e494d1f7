#!/usr/bin/env bash
# host_loss.sh PROBE [kill|partition|none] (inside with_hosts.sh --hosts 3): runs
# host_loss_main.cpp on h1:2, h2:1, h3:1 under mpirun --enable-recovery; the driver kills host h3,
# or cuts its link, mid-job. Passes when the driver printed HOST_LOSS_OK and no rank of h1 or h2
# (ranks 0-2) reported a non-zero exit code (h3's rank 3 is gone, or stopped on its own with 1),
# and rank 0 re-ran tasks lost with h3 (the loss hit work in progress).
# Two ways Open MPI's mpirun, not Weft, can spoil a run, both handled here and said:
#  * it may wait for h3's dead daemon forever after every Weft rank has ended: once the three
#    surviving ranks reported (or 20 s after the driver did), mpirun gets 5 s and is then ended;
#  * it may end the whole job when h3's daemon dies ("ORTE was unable to reliably start one or
#    more daemons"), killing the ranks of h1 under the driver: then nothing of Weft's recovery
#    can be seen, and the run is a SKIP (77) that says so, not a pass.
set -uo pipefail
probe=${1:?usage: host_loss.sh PROBE [kill|partition|none]}
# Ranks 1-3 are the workers (set here: CTest's ENVIRONMENT would split the value at its ';').
export WEFT_RESOURCES="1:w=2;2:w=2;3:w=2"
mode=${2:-kill}
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp "${TMPDIR:-/tmp}/weft-host-loss-XXXXXX")"
trap 'rm -f "$out"' EXIT
reported() { grep -c '^rank [0-9?]* exit code' "$out"; }

run_once() {
  : > "$out"
  setsid "$here/mpirun_on_hosts.sh" h1:2,h2:1,h3:1 4 --enable-recovery -- "$probe" "$mode" \
    > "$out" 2>&1 &
  local pid=$! driver_done=""
  for _ in $(seq 1000); do  # 100 s at most
    kill -0 "$pid" 2>/dev/null || break
    [ "$(reported)" -ge 3 ] && break
    if grep -q '^HOST_LOSS_OK' "$out" && [ -z "$driver_done" ]; then driver_done=$SECONDS; fi
    [ -n "$driver_done" ] && [ $((SECONDS - driver_done)) -ge 20 ] && break
    sleep 0.1
  done
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -- -"$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    note="mpirun did not exit after losing h3's daemon; ended by host_loss.sh"
  else
    wait "$pid"
    note="mpirun exited with status $?"
  fi
  cat "$out"
  echo "host_loss.sh: $note; $(reported) rank(s) reported an exit code"
}

run_once
# mpirun ended the job under the driver: no word from rank 0, and ORTE's lost-daemon notice.
if ! grep -q '^HOST_LOSS_OK' "$out" && ! grep -q '^rank 0 exit code' "$out" &&
  grep -q 'ORTE was unable to reliably start one or more daemons' "$out"; then
  echo "SKIP: mpirun ended the whole job when h3's ORTE daemon died (Open MPI's doing, not Weft's): Weft's recovery was not observed in this run"
  exit 77
fi
if ! grep -q '^HOST_LOSS_OK' "$out"; then echo "FAILED: the driver did not finish"; exit 1; fi
if grep -q '^rank [012?] exit code [1-9]' "$out"; then echo "FAILED: a rank of h1 or h2 exited non-zero"; exit 1; fi
# The loss must have hit work in progress: rank 0 re-ran tasks that were running or queued there.
if [ "$mode" != none ] && ! grep -q 'rank 3 is gone: retried [1-9]' "$out"; then
  echo "FAILED: no task was re-run after losing h3 (the loss came after the work)"; exit 1
fi
grep -o 'rank 3 is gone: retried [0-9]* task(s)' "$out" | sed 's/^/host_loss.sh: /'
grep -q '^rank 3 exit code' "$out" && echo "host_loss.sh: h3's $(grep '^rank 3 exit code' "$out")"
echo "PASS"
