#!/bin/sh
# expect_lines.sh STATUS REGEX COUNT COMMAND [ARGS...]
# Runs COMMAND (mpirun and all, or a lone program) once, passes its output through, and succeeds
# only if it exits with STATUS and exactly COUNT lines of its output (stdout and stderr, every
# rank's) match REGEX (grep -E). No line may show a crash: "terminate called", an MPI abort, or
# a process killed by a signal.
want_status="$1"
regex="$2"
want_count="$3"
shift 3
out="$(mktemp "${TMPDIR:-/tmp}/weft-expect-XXXXXX")" || exit 1
"$@" >"$out" 2>&1
rc=$?
cat "$out"
count="$(grep -Ec -- "$regex" "$out")"
status=0
if [ "$rc" != "$want_status" ]; then
  echo "expect_lines.sh: exit status ${rc}, wanted ${want_status}" >&2
  status=1
fi
if [ "$count" != "$want_count" ]; then
  echo "expect_lines.sh: ${count} line(s) match /${regex}/, wanted ${want_count}" >&2
  status=1
fi
if grep -Eq 'terminate called|MPI_ABORT|signal [0-9]+|Signal: ' "$out"; then
  echo "expect_lines.sh: the output shows a crash or an abort" >&2
  status=1
fi
rm -f "$out"
exit "$status"
