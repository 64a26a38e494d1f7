#!/usr/bin/env bash
# ckpt_app.sh STEPS — a stand-in application for slurm/weft-requeue.sbatch's contract: each
# attempt advances one step, saves it in $WEFTJOB_CHECKPOINT_DIR and asks for a requeue (exit 85)
# until STEPS are done. It proves the template resumes from the checkpoint in a new attempt of
# the same job rather than starting over.
#
# ckpt_app.sh --on-signal — the time-limit path instead: the first attempt works until SIGUSR1
# (what the template forwards when Slurm warns of the time limit; bounded at 30 s), saves its
# step and exits 85 (what a Weft app's checkpoint_point does); the template requeues it, and the
# next attempt finishes.
set -euo pipefail
ckpt="${WEFTJOB_CHECKPOINT_DIR:?WEFTJOB_CHECKPOINT_DIR not set}/step"
done_steps=0
[[ -r "$ckpt" ]] && done_steps="$(<"$ckpt")"

if [[ "${1:-}" == --on-signal ]]; then
  if ((done_steps == 0)); then
    got=0
    trap 'got=1' USR1
    echo "ckpt_app: working until the time-limit warning"
    for _ in $(seq 300); do
      ((got)) && break
      sleep 0.1 || true  # Slurm signals every process of the step, sleep included
    done
    ((got)) || { echo "ckpt_app: no SIGUSR1 within 30 s"; exit 1; }
    echo 1 >"$ckpt"
    echo "ckpt_app: SIGUSR1 received, step 1 saved (attempt ${SLURM_RESTART_COUNT:-0})"
    exit 85
  fi
  echo "ckpt_app OK steps=${done_steps} attempt=${SLURM_RESTART_COUNT:-0}"
  exit 0
fi

steps="${1:-2}"
if ((done_steps < steps)); then
  echo "$((done_steps + 1))" >"$ckpt"
  echo "ckpt_app: step $((done_steps + 1)) of ${steps} saved (attempt ${SLURM_RESTART_COUNT:-0})"
  exit 85
fi
echo "ckpt_app OK steps=${done_steps} attempt=${SLURM_RESTART_COUNT:-0}"
