#!/usr/bin/env bash
# expect_lines.sh <regex>... -- <command...>: runs the command, prints its output, and passes when
# the command passed and every extended regex matches some line of the output (in any order:
# lines from different ranks interleave).
set -u
pats=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do pats+=("$1"); shift; done
shift
out=$("$@" 2>&1)
rc=$?
echo "$out"
missing=0
for p in "${pats[@]}"; do
  if ! grep -Eq -- "$p" <<<"$out"; then echo "MISSING: a line matching '$p'"; missing=1; fi
done
if [ "$rc" -ne 0 ] || [ "$missing" -ne 0 ]; then echo "FAIL (exit status $rc)"; exit 1; fi
echo "ALL_LINES_FOUND"
