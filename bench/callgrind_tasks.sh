#!/usr/bin/env bash
# Instructions per task, counted by callgrind: a deterministic figure that, unlike wall time,
# does not move with machine load. Builds nothing; needs weft_microbench in BUILD_DIR.
#
#   bench/callgrind_tasks.sh BUILD_DIR [N] [REPEATS]   (N tasks per run, default 1000; each run
#                                                     repeated 3 times, the median kept)
#
# For 1 rank (no mpirun) and 2 ranks (mpirun -n 2 on loopback, one callgrind per rank) it runs
# weft_microbench --fixed-sync/--fixed-async with 0 and with N tasks, and prints
# (Ir(N) - Ir(0)) / N, so fixed costs cancel. Tasks go to rank 0 with 1 rank and to rank 1 with
# 2; with 2 ranks it prints rank 0's figure (the submitter) and the sum of both.
# Counting is limited to the workload's window (weft_microbench's callgrind_window_begin/end):
# whole runs differ by a few million instructions of MPI start-up polling from one run to the
# next, the window by about 10 thousand. What still varies is idle spinning, whose length
# follows the wall clock and so the machine's load: a TBB worker's after each task (on a loaded
# machine up to +10 % on 1-rank sync tasks, hence the median of repeats) and rank 1's polling
# between sync tasks (in all_ranks, ~5 %). Other figures repeat within ~1 %.
set -euo pipefail

build="${1:?usage: bench/callgrind_tasks.sh BUILD_DIR [N]}"
n="${2:-1000}"
repeats="${3:-3}"
bin="$(cd "${build}" && pwd)/bench/core/weft_microbench"
if [[ ! -x "${bin}" ]]; then
  echo "callgrind_tasks: ${bin} is not built (cmake --build ${build} --target weft_microbench)" >&2
  exit 2
fi
command -v valgrind >/dev/null || { echo "callgrind_tasks: valgrind not found" >&2; exit 2; }

out="$(mktemp -d /tmp/weft-callgrind.XXXXXX)"
# Idle time must not turn into instructions: the event loop parks at once instead of spinning or
# yielding, the 2-rank liveness heartbeat (a timer) is off, and one worker thread (the TBB arena's
# idle workers spin for a time-dependent while: +-10 % per sync task on 1 rank with the default
# 4, +-0.3 % with 1). Valgrind runs one thread at a time; --fair-sched hands the lock round robin
# so the remaining spinning does not depend on who grabs it.
export WEFT_LOOP_SPIN_US=0 WEFT_LOOP_YIELD_US=0 WEFT_LIVENESS_INTERVAL_MS=0 WEFT_WORKER_THREADS=1
export UCX_NET_DEVICES=lo
mpirun_lo=(mpirun --allow-run-as-root --oversubscribe -n 2 --mca btl_tcp_if_include lo
           --mca oob_tcp_if_include lo -x UCX_NET_DEVICES -x WEFT_LOOP_SPIN_US
           -x WEFT_LOOP_YIELD_US -x WEFT_LIVENESS_INTERVAL_MS -x WEFT_WORKER_THREADS)
# WEFT_TIMELINE=0 bench/callgrind_tasks.sh ...: the same counts with the timeline off, on every rank.
[[ -n "${WEFT_TIMELINE:-}" ]] && mpirun_lo+=(-x WEFT_TIMELINE)
cg=(valgrind --tool=callgrind --quiet --fair-sched=yes
    --zero-before='*::callgrind_window_begin()' --dump-before='*::callgrind_window_end()')

ir() {  # ir NAME RANK: instructions in that rank's window (the dump at the window's end)
  local f="${out}/$1.$2.out.1"
  [[ -s "${f}" ]] || { echo "callgrind_tasks: no window dump ${f}" >&2; exit 1; }
  awk '/^totals:/ {print $2}' "${f}"
}

median() { printf "%s\n" "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

measure() {  # measure RANKS NAME ARGS...: "rank0 all_ranks" window Ir, medians over the repeats
  local ranks="$1" name="$2" k r sum; shift 2
  local r0s=() sums=()
  for ((k = 0; k < repeats; ++k)); do
    run "${ranks}" "${name}_${k}" "$@"
    sum=0
    for ((r = 0; r < ranks; ++r)); do sum=$((sum + $(ir "${name}_${k}" "${r}"))); done
    r0s+=("$(ir "${name}_${k}" 0)") sums+=("${sum}")
  done
  echo "$(median "${r0s[@]}") $(median "${sums[@]}")"
}

run() {  # run RANKS NAME ARGS...: leaves NAME.<rank>.out under $out
  local ranks="$1" name="$2"; shift 2
  if ((ranks == 1)); then
    "${cg[@]}" --callgrind-out-file="${out}/${name}.0.out" "${bin}" "$@" >"${out}/${name}.log" 2>&1
  else
    "${mpirun_lo[@]}" "${cg[@]}" \
      --callgrind-out-file="${out}/${name}.%q{OMPI_COMM_WORLD_RANK}.out" \
      "${bin}" "$@" >"${out}/${name}.log" 2>&1
  fi || { echo "callgrind_tasks: ${name} failed, see ${out}/${name}.log" >&2; exit 1; }
}

printf "weft instructions per task (callgrind Ir in the workload window; (%d tasks - 0) / %d;"\
" median of %d)\n" "${n}" "${n}" "${repeats}"
echo "(WEFT_LOOP_SPIN_US=0 WEFT_LOOP_YIELD_US=0 WEFT_LIVENESS_INTERVAL_MS=0 WEFT_WORKER_THREADS=1)"
printf "%-6s %-14s %16s %16s\n" ranks workload rank0_Ir/task all_ranks_Ir/task
for ranks in 1 2; do
  read -r zero0 zero_all < <(measure "${ranks}" "r${ranks}_zero" --fixed-sync 0 --fixed-async 0)
  for w in sync async async_warm async_int_arg; do
    case ${w} in
      sync) args=(--fixed-sync "${n}" --fixed-async 0) ;;
      async) args=(--fixed-sync 0 --fixed-async "${n}") ;;
      # The same burst after an identical one outside the window: the steady state, where
      # hash tables and free lists have grown already.
      async_warm) args=(--fixed-sync 0 --fixed-async "${n}" --fixed-warm) ;;
      # Warm too, with an int argument and an int result: the argument block and the value.
      async_int_arg) args=(--fixed-sync 0 --fixed-async "${n}" --fixed-warm --fixed-int-arg) ;;
    esac
    read -r w0 w_all < <(measure "${ranks}" "r${ranks}_${w}" "${args[@]}")
    awk -v r="${ranks}" -v w="${w}" -v a="$((w0 - zero0))" -v b="$((w_all - zero_all))" \
      -v n="${n}" 'BEGIN {printf "%-6s %-14s %16.0f %16.0f\n", r, w, a / n, b / n}'
  done
done
echo "(all_ranks includes rank 1's idle polling between sync tasks, which varies ~5 % run to run;"
echo " callgrind output and logs: ${out})"
