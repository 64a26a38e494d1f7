#!/bin/sh
# run_expect.sh REGEX COMMAND [ARGS...]
# Runs COMMAND, passes its output through, and succeeds only if it exits 0 and, on the rank that
# prints results (rank 0 under mpirun, or a lone process), its output matches REGEX (grep -E).
# CTest's PASS_REGULAR_EXPRESSION alone would ignore the exit code; this checks both.
regex="$1"
shift
out="$(mktemp "${TMPDIR:-/tmp}/weft-example-XXXXXX")" || exit 1
"$@" >"$out" 2>&1
rc=$?
cat "$out"
rank="${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}"
if [ "$rc" -eq 0 ] && [ "$rank" = 0 ] && ! grep -Eq "$regex" "$out"; then
  echo "run_expect.sh: output of '$*' does not match: $regex" >&2
  rc=1
fi
rm -f "$out"
exit "$rc"
