#!/usr/bin/env bash
# check_exit_code.sh <expected> <expected ranks> <command...>: the command must exit with
# <expected> and every one of <expected ranks> ranks must report it.
set -u
expected=$1 ranks=$2
shift 2
out=$("$@" 2>&1)
rc=$?
echo "$out"
n=$(grep -c "^rank exit code ${expected}\$" <<<"$out")
if [ "$rc" -ne "$expected" ] || [ "$n" -ne "$ranks" ]; then
  echo "FAIL: exit status $rc (want $expected), $n of $ranks ranks reported $expected"
  exit 1
fi
echo "PASS"
