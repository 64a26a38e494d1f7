# Shared by cli_*.sh: argument parsing, a private TMPDIR, launching a stuck job, and checks.
# Usage of the scripts: SCRIPT MPIRUN WEFT_CLI STUCK_JOB SRC_DIR -- MPIRUN_FLAGS...
set -uo pipefail
MPIRUN="$1"; WEFT="$2"; APP="$3"; SRC="$4"; shift 4
[ "$1" = "--" ] && shift
MPIFLAGS=("$@")
export UCX_NET_DEVICES=lo OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
# A short private folder: session directories are looked for here, and a socket path is short.
ROOT="$(mktemp -d /tmp/wops-XXXXXX)"
export TMPDIR="$ROOT"
unset WEFT_SESSION_DIR
FAILS=0
PIDS=()
cleanup() {
  for d in "$ROOT"/m*; do [ -d "$d" ] && touch "$d/release"; done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$ROOT"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }
# expect_in FILE REGEX WHAT
expect_in() { if grep -Eq -- "$2" "$1"; then pass "$3"; else fail "$3: /$2/ not in:"; sed 's/^/    /' "$1"; fi; }

# launch NP MARKERS [ENV=VALUE...]: starts a stuck job in the background; sets LAST_PID.
launch() {
  local np="$1" markers="$2"; shift 2
  mkdir -p "$markers"
  local xs=()
  for kv in "$@"; do xs+=(-x "$kv"); done
  "$MPIRUN" "${MPIFLAGS[@]}" -n "$np" -x TMPDIR "${xs[@]}" -x "WEFT_RESOURCES=0:special=1;3:other=1" \
    "$APP" "$markers" > "$markers/out.log" 2>&1 &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
}

wait_file() {  # wait_file PATH SECONDS
  local i=0
  while [ ! -e "$1" ]; do
    sleep 0.1; i=$((i + 1))
    [ "$i" -ge $(( $2 * 10 )) ] && return 1
  done
  return 0
}

mode_of() { stat -c %a "$1"; }
