#!/usr/bin/env bash
# check_exit_code.sh [--any-status] <expected> <ranks> <command...>: every one of <ranks> ranks
# must report exit code <expected>, and the command must exit with <expected> (unless
# --any-status: mpirun told not to abort on a non-zero rank reports its own status, not theirs).
set -u
any=0
if [ "$1" = "--any-status" ]; then any=1; shift; fi
expected=$1 ranks=$2
shift 2
out=$("$@" 2>&1)
rc=$?
echo "$out"
n=$(grep -c "^rank exit code ${expected}\$" <<<"$out")
if { [ "$any" -eq 0 ] && [ "$rc" -ne "$expected" ]; } || [ "$n" -ne "$ranks" ]; then
  echo "FAIL: exit status $rc (want $expected), $n of $ranks ranks reported $expected"
  exit 1
fi
echo "PASS"
