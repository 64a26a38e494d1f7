#!/usr/bin/env bash
# run_slurm_tests.sh --probe <mpi_probe> [--checks a,b,...] — Weft's launch paths under a real
# Slurm.
#
# Starts a private one-node cluster (local_slurm.sh), then checks:
#   a) an sbatch job runs `srun --mpi=pmix -n 4 --overcommit mpi_probe` and its output file shows
#      4 ranks that srun started directly and that talk to each other;
#   b) weft-run inside salloc and inside sbatch chooses srun (and mpirun for --recover), really
#      runs the ranks that way, and passes the app's exit code through;
#   c) slurm/weft-job.sbatch runs an app on every task with weft-run's options;
#   d) slurm/weft-requeue.sbatch resumes from checkpoints across requeues asked by the app;
#   e) ... and across a requeue forced by Slurm's time-limit warning signal;
#   f) slurm/param-sweep.sbatch prints "param_sweep OK" when $WEFTDEV_SLURM_APP exists;
#   g) slurm/weft-requeue.sbatch with a real Weft app ($WEFTDEV_SLURM_CKPT_APP,
#      examples/09_job_checkpoint on 2 ranks): the time-limit warning stops it at a job
#      checkpoint (exit 85), the requeued attempt resumes from the file, and its answer is the
#      one an uninterrupted run prints.
# --checks picks a subset (default: all), so that ctest can run them as short separate tests.
# Exit: 0 all passed, 1 a check failed, 77 Slurm is not installed (ctest shows SKIP). Every wait
# is bounded and the cluster is stopped and its folder removed on any exit.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE
ROOT="$(cd "${HERE}/../.." && pwd)"
readonly ROOT
readonly LAUNCHER="${ROOT}/launchers/weft-run"
readonly JOB_TIMEOUT="${WEFTDEV_SLURM_JOB_TIMEOUT:-60}"

probe=""
checks="a,b,c,d,e,f,g"
while (($# > 0)); do
  case "$1" in
    --probe) probe="${2:-}"; shift 2 ;;
    --checks) checks="${2:-}"; shift 2 ;;
    *) echo "usage: $0 --probe <mpi_probe binary> [--checks a,b,c,d,e,f,g]" >&2; exit 2 ;;
  esac
done
wanted() { [[ ",${checks}," == *",$1,"* ]]; }
[[ -x "$probe" ]] || { echo "run_slurm_tests: --probe '${probe}' is not an executable" >&2; exit 2; }

export PATH="${PATH}:/usr/sbin:/sbin"
for p in munged slurmctld slurmd sbatch salloc srun scontrol; do
  if ! command -v "$p" >/dev/null 2>&1; then
    echo "run_slurm_tests: SKIP: '${p}' not installed (apt-get install slurm-wlm munge libpmix-dev)"
    exit 77
  fi
done

# A test run inside someone's Slurm job must not inherit that job's identity.
while IFS='=' read -r name _; do
  [[ "$name" == SLURM_* ]] && unset "$name"
done < <(env)

work="$(mktemp -d "${TMPDIR:-/tmp}/weft-slurm-tests.XXXXXX")"
export WEFTDEV_SLURM_DIR="${work}/cluster"
# local_slurm.sh picks a free port pair itself (below the ephemeral range, retrying on a bind
# failure), so a developer's own local cluster can keep running alongside.
unset WEFTDEV_SLURM_PORT

failures=0
cleanup() {
  if ((failures > 0)); then
    for f in "${WEFTDEV_SLURM_DIR}"/log/*.log; do
      [[ -r "$f" ]] && { echo "----- ${f##*/} (last 15 lines)"; tail -n 15 "$f"; }
    done
  fi
  "${HERE}/local_slurm.sh" stop 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"${HERE}/local_slurm.sh" start || { rc=$?; [[ $rc == 77 ]] && exit 77; echo "FAIL: cluster did not start"; exit 1; }
eval "$("${HERE}/local_slurm.sh" env)"
cd "$work" || exit 1

pass() { echo "PASS ${1} (at ${SECONDS} s)"; }
fail() {  # fail <name> <why> [file with output]
  failures=$((failures + 1))
  echo "FAIL ${1}: ${2}"
  [[ -n "${3:-}" && -r "${3}" ]] && sed 's/^/    | /' "$3"
}
# check_job <name> <id> <output file> <ERE> [timeout]: the job must complete and print the line.
check_job() {
  local state
  state="$(wait_job "$2" "${5:-$JOB_TIMEOUT}")"
  if [[ "$state" != COMPLETED ]]; then
    fail "$1" "job $2 ended ${state}" "$3"
  else
    expect_line "$1" "$3" "$4"
  fi
}
expect_line() {  # expect_line <name> <file> <ERE>: pass iff a line of file matches
  if grep -qE "$3" "$2" 2>/dev/null; then pass "$1"; else fail "$1" "no line matching /$3/" "$2"; fi
}

# Waits (bounded) for a batch job to end and prints its final state. Requeued jobs are held by a
# 2-minute BeginTime; the wait moves it to now so requeue tests take seconds, not minutes.
wait_job() {  # wait_job <id> [timeout]
  local id="$1" deadline=$((SECONDS + ${2:-$JOB_TIMEOUT})) line state held_since=-1
  # An empty id would make scontrol describe every job.
  [[ "$id" =~ ^[0-9]+$ ]] || { echo "NOT_SUBMITTED"; return 0; }
  while ((SECONDS < deadline)); do
    line="$(timeout 5 scontrol show job -o "$id" 2>/dev/null || true)"
    state="$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$line")"
    case "$state" in
      COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
        echo "$state"; return 0 ;;
    esac
    # Release a requeued job 2 s after it was held, not at once: requeueing revokes the job's
    # credential on slurmd with a timestamp in whole seconds, and a relaunch within that same
    # second is refused ("Job credential revoked") and fails the job — Slurm's own 2-minute
    # hold exists to step around this.
    if [[ "$line" == *Reason=BeginTime* ]]; then
      ((held_since >= 0)) || held_since=$SECONDS
      if ((SECONDS - held_since >= 2)); then
        timeout 5 scontrol update JobId="$id" StartTime=now >/dev/null 2>&1
        held_since=-1
      fi
    fi
    sleep 0.3
  done
  timeout 10 scancel "$id" 2>/dev/null
  echo "TIMEOUT_WAITING"
}

submit() {  # submit <sbatch args...>: prints the job id
  timeout 15 sbatch --parsable --chdir="$work" "$@" | cut -d';' -f1
}

# ---- a) sbatch + srun --mpi=pmix ---------------------------------------------------------------
if wanted a; then
  cat >a.sbatch <<EOF
#!/bin/bash
#SBATCH -n 4
#SBATCH --overcommit
#SBATCH -o a.out
srun --mpi=pmix -n 4 --overcommit "${probe}"
EOF
  id="$(submit a.sbatch)"
  check_job a_sbatch_srun_pmix "$id" a.out '^probe OK size=4 direct_launch=yes'
fi

# ---- b) weft-run inside an allocation ----------------------------------------------------------
if wanted b; then
  timeout "$JOB_TIMEOUT" salloc -n 4 --overcommit "$LAUNCHER" --verbose --virtual-nodes 2 "$probe" \
    >b1.out 2>&1
  rc=$?
  ((rc == 0)) || fail b_salloc_weft_run_uses_srun "salloc exited ${rc}" b1.out
  expect_line b_salloc_weft_run_uses_srun b1.out '^weft-run: launcher=srun'
  expect_line b_salloc_weft_run_srun_starts_ranks b1.out \
    '^probe OK size=4 direct_launch=yes virtual_nodes=2$'

  timeout "$JOB_TIMEOUT" salloc -n 2 "$LAUNCHER" "$probe" 3 >b2.out 2>&1
  rc=$?
  if ((rc == 3)); then pass b_weft_run_passes_exit_code_in_slurm; else
    fail b_weft_run_passes_exit_code_in_slurm "wanted 3, got ${rc}" b2.out; fi

  cat >b3.sbatch <<EOF
#!/bin/bash
#SBATCH -n 4
#SBATCH --overcommit
#SBATCH -o b3.out
echo "dry: \$("${LAUNCHER}" --dry-run "${probe}")"
echo "dry-recover: \$("${LAUNCHER}" --dry-run --recover "${probe}")"
"${LAUNCHER}" --verbose --recover -n 2 "${probe}"
EOF
  id="$(submit b3.sbatch)"
  state="$(wait_job "$id")"
  [[ "$state" == COMPLETED ]] || fail b_sbatch_weft_run "job ${id} ended ${state}" b3.out
  expect_line b_sbatch_weft_run_dry_run_shows_srun b3.out '^dry: (env .* )?srun --mpi=pmix .*mpi_probe$'
  expect_line b_sbatch_weft_run_recover_uses_mpirun b3.out \
    '^dry-recover: mpirun .*--enable-recovery .*mpi_probe$'
  expect_line b_sbatch_weft_run_recover_runs_ranks b3.out '^probe OK size=2 direct_launch=no'
fi

# ---- c) slurm/weft-job.sbatch ------------------------------------------------------------------
if wanted c; then
  id="$(WEFTJOB_APP="$probe" WEFTJOB_RUN="$LAUNCHER" WEFTJOB_RUN_ARGS="--virtual-nodes 2" \
    submit -n 4 --overcommit -o c.out "${ROOT}/slurm/weft-job.sbatch")"
  check_job c_weft_job_template "$id" c.out '^probe OK size=4 direct_launch=yes virtual_nodes=2$'
fi

# ---- d) slurm/weft-requeue.sbatch, requeue asked by the app ------------------------------------
if wanted d; then
  id="$(WEFTJOB_APP="${HERE}/ckpt_app.sh" WEFTJOB_RUN="$LAUNCHER" WEFTJOB_RUN_ARGS="-n 1" \
    WEFTJOB_CHECKPOINT_DIR="${work}/ckpt-d" submit -n 1 -o d.out "${ROOT}/slurm/weft-requeue.sbatch" 1)"
  check_job d_requeue_on_app_request "$id" d.out '^ckpt_app OK steps=1 attempt=1$'
fi

# ---- e) slurm/weft-requeue.sbatch, requeue on the time-limit warning ---------------------------
if wanted e; then
  id="$(WEFTJOB_APP="${HERE}/ckpt_app.sh" WEFTJOB_RUN="$LAUNCHER" WEFTJOB_RUN_ARGS="-n 1" \
    WEFTJOB_CHECKPOINT_DIR="${work}/ckpt-e" submit -n 1 -o e.out "${ROOT}/slurm/weft-requeue.sbatch" \
    --on-signal)"
  # Slurm sends the warning to the batch shell only (--signal=B:USR1); do the same, once the app
  # is at work, instead of waiting 5 minutes before a time limit.
  deadline=$((SECONDS + 30))
  until grep -q 'working until' e.out 2>/dev/null || ((SECONDS >= deadline)); do sleep 0.2; done
  timeout 5 scancel --batch --signal=USR1 "$id"
  check_job e_requeue_on_time_limit_warning "$id" e.out '^ckpt_app OK steps=1 attempt=1$'
fi

# ---- f) slurm/param-sweep.sbatch ---------------------------------------------------------------
if wanted f; then
  if [[ -n "${WEFTDEV_SLURM_APP:-}" && -x "${WEFTDEV_SLURM_APP}" ]]; then
    id="$(WEFTJOB_APP="$WEFTDEV_SLURM_APP" WEFTJOB_RUN="$LAUNCHER" \
      submit -n 4 --overcommit -o f.out "${ROOT}/slurm/param-sweep.sbatch")"
    check_job f_param_sweep_template "$id" f.out '^param_sweep OK' 120
  else
    echo "NOTE f_param_sweep_template not run: WEFTDEV_SLURM_APP='${WEFTDEV_SLURM_APP:-}' is not built"
  fi
fi

# ---- g) slurm/weft-requeue.sbatch with a Weft app: stop at a job checkpoint, resume -----------
if wanted g; then
  app="${WEFTDEV_SLURM_CKPT_APP:-}"
  if [[ -n "$app" && -x "$app" ]]; then
    g_args=(--steps=40 --chunks=3 --cells=16)
    # The uninterrupted answer: one rank alone (the answer does not depend on the rank count).
    want="$(UCX_NET_DEVICES=lo timeout "$JOB_TIMEOUT" "$app" "${g_args[@]}" 2>&1 | grep '^answer ')"
    id="$(WEFTJOB_APP="$app" WEFTJOB_RUN="$LAUNCHER" WEFTJOB_RUN_ARGS="-n 2" \
      WEFTJOB_CHECKPOINT_DIR="${work}/ckpt-g" submit -n 2 --overcommit -o g.out \
      "${ROOT}/slurm/weft-requeue.sbatch" "${g_args[@]}" --step-ms=20)"
    deadline=$((SECONDS + 60))
    until grep -q '^working' g.out 2>/dev/null || ((SECONDS >= deadline)); do sleep 0.2; done
    sleep 0.3
    timeout 5 scancel --batch --signal=USR1 "$id"
    state="$(wait_job "$id" 120)"
    if [[ "$state" != COMPLETED ]]; then
      fail g_weft_app_requeue "job ${id} ended ${state}" g.out
    else
      expect_line g_weft_app_stops_at_checkpoint g.out \
        'stopped on SIGUSR1 at job checkpoint 1 \(.*/job\.ckpt\.h5\); exit code 85'
      expect_line g_weft_app_requeued g.out '^weft-requeue: requeueing job'
      expect_line g_weft_app_resumes g.out '^resumed from job checkpoint 1 at step [1-9]'
      got="$(grep '^answer ' g.out | tail -n 1)"
      if [[ -n "$want" && "$got" == "$want" ]]; then pass g_weft_app_same_answer; else
        fail g_weft_app_same_answer "answer '${got}', uninterrupted '${want}'" g.out; fi
    fi
  else
    echo "NOTE g_weft_app_requeue not run: WEFTDEV_SLURM_CKPT_APP='${app}' is not built"
  fi
fi

if ((failures > 0)); then
  echo "run_slurm_tests: ${failures} check(s) failed"
  exit 1
fi
echo "run_slurm_tests: all checks passed"
