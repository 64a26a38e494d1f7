#!/usr/bin/env bash
# progress_on_terminal.sh PARAM_SWEEP: the sweep draws its progress line (weft::Progress) when
# stderr is a terminal (a pseudo-terminal made by script(1)), ending at every trial done, and
# writes none into a file.
set -uo pipefail
app="$1"
export UCX_NET_DEVICES=lo
out="$(mktemp -d "${TMPDIR:-/tmp}/weft-progress-XXXXXX")"
trap 'rm -rf "$out"' EXIT
fails=0
args="--lr-points 4 --momentum-points 4 --steps 2000"
if ! command -v script > /dev/null; then echo "skip: script(1) is not installed"; exit 0; fi
script -qec "$app $args" /dev/null > "$out/tty.txt" 2>&1 || { echo "FAIL: the sweep under a terminal failed"; cat "$out/tty.txt"; exit 1; }
if grep -aEq '\[#{30}\] 16/16 trials  [0-9.]+ s' "$out/tty.txt"; then echo "ok: on a terminal the line ends full: 16/16 trials"; else echo "FAIL: no full progress line on a terminal:"; cat -v "$out/tty.txt"; fails=1; fi
grep -aq 'param_sweep OK points=16' "$out/tty.txt" && echo "ok: the sweep's result follows" || { echo "FAIL: no result line"; fails=1; }
"$app" $args > "$out/plain.txt" 2> "$out/plain.err" || { echo "FAIL: the plain run failed"; cat "$out/plain.err"; exit 1; }
if grep -aq 'trials  ' "$out/plain.err"; then echo "FAIL: a progress line went into a file:"; cat -v "$out/plain.err"; fails=1; else echo "ok: into a file, no progress line"; fi
exit "$fails"
