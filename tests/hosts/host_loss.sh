#!/usr/bin/env bash
# host_loss.sh PROBE [kill|partition] (inside with_hosts.sh --hosts 3): runs host_loss_main.cpp
# on h1:2, h2:1, h3:1 under mpirun --enable-recovery; the driver kills host h3, or cuts its link,
# mid-job. Passes when the driver printed HOST_LOSS_OK and no rank of h1 or h2 (ranks 0-2)
# reported a non-zero exit code (h3's rank 3 is gone, or stopped on its own with 1).
# Open MPI's mpirun then sometimes waits for h3's dead daemon forever, after every Weft rank has
# ended: once the three surviving ranks reported (or 20 s after the driver did), mpirun is given
# 5 s and then ended here, and the script says so.
set -uo pipefail
probe=${1:?usage: host_loss.sh PROBE [kill|partition]}
mode=${2:-kill}
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp "${TMPDIR:-/tmp}/weft-host-loss-XXXXXX")"
trap 'rm -f "$out"' EXIT
setsid "$here/mpirun_on_hosts.sh" h1:2,h2:1,h3:1 4 --enable-recovery -- "$probe" "$mode" > "$out" 2>&1 &
pid=$!
reported() { grep -c '^rank [0-9?]* exit code' "$out"; }
driver_done=""
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
if ! grep -q '^HOST_LOSS_OK' "$out"; then echo "FAILED: the driver did not finish"; exit 1; fi
if grep -q '^rank [012?] exit code [1-9]' "$out"; then echo "FAILED: a rank of h1 or h2 exited non-zero"; exit 1; fi
# The loss must have hit work in progress: rank 0 re-ran tasks that were running or queued there.
if [ "$mode" != none ] && ! grep -q 'rank 3 is gone: retried [1-9]' "$out"; then
  echo "FAILED: no task was re-run after losing h3 (the loss came after the work)"; exit 1
fi
grep -q '^rank 3 exit code' "$out" && echo "host_loss.sh: h3's $(grep '^rank 3 exit code' "$out")"
echo "PASS"
