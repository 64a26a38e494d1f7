#!/usr/bin/env bash
# job_checkpoint_requeue.sh APP MPIRUN [MPIRUN ARGS...] — the stop-and-resume contract of
# examples/09_job_checkpoint (APP) under a real mpirun, without Slurm:
#   a) an uninterrupted run prints the answer;
#   b) a run sent SIGUSR1 (to mpirun, which forwards it to every rank, as Slurm's warning reaches
#      the job) writes job.ckpt.h5 at the driver's next checkpoint point and exits 85 on every
#      rank with one line naming the signal and the file, before it has an answer;
#   c) the next run in the same folder resumes from that checkpoint and prints the same answer;
#   d) a checkpoint file damaged in its state bytes stops the next run with an error naming the
#      file: never a crash, never a silent fresh start;
#   e) a stop in a run that has no job_checkpoint_dir fails naming the setting.
# Every wait is bounded; the folder is removed on any exit.
set -uo pipefail
app="$1"
shift
mpi=("$@")
work="$(mktemp -d "${TMPDIR:-/tmp}/weft-jobckpt-XXXXXX")" || exit 1
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL $1: $2"
  [[ -n "${3:-}" && -r "$3" ]] && sed 's/^/    | /' "$3"
  failures=$((failures + 1))
}
pass() { echo "PASS $1"; }
args=(--steps=40 --chunks=3 --cells=16)

# Starts a run in the background that SIGUSR1 stops once it is at work; sets rc.
run_and_stop() {  # run_and_stop <out> <app args...>
  local out="$1"
  shift
  "${mpi[@]}" "$app" "$@" >"$out" 2>&1 &
  local pid=$! deadline=$((SECONDS + 60))
  until grep -q '^working' "$out" 2>/dev/null || ((SECONDS >= deadline)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  sleep 0.3  # a few steps in
  kill -USR1 "$pid" 2>/dev/null
  deadline=$((SECONDS + 60))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  wait "$pid"
  rc=$?
}

# a) the answer of an uninterrupted run
"${mpi[@]}" "$app" --weft-job-checkpoint-dir="$work/a" "${args[@]}" >"$work/a.out" 2>&1
rc=$?
want="$(grep '^answer ' "$work/a.out")"
if ((rc == 0)) && [[ -n "$want" ]]; then pass a_uninterrupted; else
  fail a_uninterrupted "exit ${rc}, answer '${want}'" "$work/a.out"; fi

# b) stopped by SIGUSR1: exit 85, the file, one line
run_and_stop "$work/b1.out" --weft-job-checkpoint-dir="$work/b" "${args[@]}" --step-ms=20
lines="$(grep -c 'stopped on SIGUSR1 at job checkpoint 1 (.*/job.ckpt.h5); exit code 85 on every rank' "$work/b1.out")"
if ((rc == 85)) && [[ "$lines" == 1 && -s "$work/b/job.ckpt.h5" ]] &&
    ! grep -q '^answer ' "$work/b1.out"; then pass b_stop_writes_checkpoint_exits_85; else
  fail b_stop_writes_checkpoint_exits_85 "exit ${rc} (wanted 85), ${lines} stop line(s)" "$work/b1.out"; fi
if grep -Eq 'terminate called|MPI_ABORT|Signal: |exited on signal|killed by signal' "$work/b1.out"; then
  fail b_no_crash "the stopped run shows a crash or abort" "$work/b1.out"; fi

# c) the next run resumes and gets the uninterrupted answer
"${mpi[@]}" "$app" --weft-job-checkpoint-dir="$work/b" "${args[@]}" >"$work/b2.out" 2>&1
rc=$?
got="$(grep '^answer ' "$work/b2.out")"
if ((rc == 0)) && grep -Eq '^resumed from job checkpoint 1 at step [1-9][0-9]*$' "$work/b2.out" &&
    [[ -n "$want" && "$got" == "$want" ]]; then pass c_resume_same_answer; else
  fail c_resume_same_answer "exit ${rc}; answer '${got}', uninterrupted '${want}'" "$work/b2.out"; fi

# d) a damaged checkpoint: an error naming the file, exit 1, no fresh start
if [[ -s "$work/b/job.ckpt.h5" ]]; then
  size="$(stat -c %s "$work/b/job.ckpt.h5")"
  # The state dataset lies in the file's last bytes (after the metadata HDF5 writes first).
  printf '\x5a\x5a\x5a\x5a' | dd of="$work/b/job.ckpt.h5" bs=1 seek=$((size - 40)) conv=notrunc status=none
  "${mpi[@]}" "$app" --weft-job-checkpoint-dir="$work/b" "${args[@]}" >"$work/d.out" 2>&1
  rc=$?
  if ((rc == 1)) && grep -q "checkpoint file $work/b/job.ckpt.h5: " "$work/d.out" &&
      ! grep -q '^answer \|^working' "$work/d.out"; then pass d_damaged_file_named; else
    fail d_damaged_file_named "exit ${rc}" "$work/d.out"; fi
fi

# e) a stop without a folder for the checkpoint
run_and_stop "$work/e.out" "${args[@]}" --step-ms=20
if ((rc == 1)) && grep -q 'set job_checkpoint_dir' "$work/e.out"; then
  pass e_stop_without_folder_names_setting; else
  fail e_stop_without_folder_names_setting "exit ${rc} (wanted 1)" "$work/e.out"; fi

if ((failures > 0)); then
  echo "job_checkpoint_requeue: ${failures} check(s) failed"
  exit 1
fi
echo "job_checkpoint_requeue OK"
