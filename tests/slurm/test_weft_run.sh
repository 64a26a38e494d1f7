#!/usr/bin/env bash
# test_weft_run.sh --probe <mpi_probe> --checks choice|run — launchers/weft-run without Slurm.
#
#   choice  the command weft-run picks (--dry-run): mpirun defaults, oversubscription, network
#           pinning, recovery, virtual nodes, the single-process fallback, the Slurm branch
#           (from the variables an allocation sets), and every usage error's status and message;
#   run     real launches: mpirun with 2 ranks that talk, a singleton, exit codes passed through.
# The Slurm branch is checked for real, under a real Slurm, by run_slurm_tests.sh; here SLURM_*
# variables only steer the choice, and the stand-in srun path is never executed (--dry-run).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE
readonly LAUNCHER="${HERE}/../../launchers/weft-run"

probe=""
checks=""
while (($# > 0)); do
  case "$1" in
    --probe) probe="${2:-}"; shift 2 ;;
    --checks) checks="${2:-}"; shift 2 ;;
    *) echo "usage: $0 --probe <mpi_probe> --checks choice|run" >&2; exit 2 ;;
  esac
done
[[ -x "$probe" ]] || { echo "test_weft_run: --probe '${probe}' is not an executable" >&2; exit 2; }

# Whatever allocation the test itself runs in must not steer weft-run.
while IFS='=' read -r name _; do
  [[ "$name" == SLURM_* ]] && unset "$name"
done < <(env)
unset WEFTRUN_LAUNCHER WEFTRUN_MPIRUN WEFTRUN_SRUN WEFTRUN_SRUN_MPI OMPI_MCA_btl_tcp_if_include \
  UCX_NET_DEVICES

failures=0
out="$(mktemp "${TMPDIR:-/tmp}/weft-run-test.XXXXXX")"
trap 'rm -f "$out"' EXIT

# t <name> <wanted status> <ERE the output must match | -> <ERE it must not match | -> -- cmd...
t() {
  local name="$1" want="$2" must="$3" mustnt="$4" rc
  shift 5
  timeout 60 "$@" >"$out" 2>&1
  rc=$?
  if [[ "$rc" != "$want" ]]; then
    echo "FAIL ${name}: status ${rc}, wanted ${want}"
  elif [[ "$must" != - ]] && ! grep -qE -- "$must" "$out"; then
    echo "FAIL ${name}: no match for /${must}/"
  elif [[ "$mustnt" != - ]] && grep -qE -- "$mustnt" "$out"; then
    echo "FAIL ${name}: unexpected match for /${mustnt}/"
  else
    echo "PASS ${name}"
    return 0
  fi
  failures=$((failures + 1))
  sed 's/^/    | /' "$out"
}

W="$LAUNCHER"
cores="$(nproc)"
root_flag=""
((EUID == 0)) && root_flag="--allow-run-as-root "
pins="--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo -x UCX_NET_DEVICES=lo"
mpirun_bin="$(command -v mpirun || true)"
no_mpirun=(env WEFTRUN_MPIRUN=/nonexistent/mpirun)
# The Slurm branch's inputs: what srun sees in a one-node allocation of 4 tasks on 2 CPUs.
srun_standin="$(command -v true)"
slurm1=(env SLURM_JOB_ID=42 SLURM_NTASKS=4 SLURM_JOB_NUM_NODES=1 SLURM_JOB_CPUS_PER_NODE=2
  WEFTRUN_SRUN="$srun_standin")

choice_checks() {
  if [[ -z "$mpirun_bin" ]]; then
    echo "FAIL mpirun not on PATH: the mpirun checks need Open MPI"
    failures=$((failures + 1))
  fi
  t mpirun_default_one_rank_per_core 0 \
    "^mpirun ${root_flag}-n ${cores} --bind-to none ${pins} ${probe}\$" oversubscribe -- \
    "$W" --dry-run "$probe"
  t mpirun_oversubscribes_past_the_cores 0 \
    "^mpirun ${root_flag}-n $((cores * 2)) --oversubscribe --bind-to none ${pins} " - -- \
    "$W" --dry-run -n $((cores * 2)) "$probe"
  t mpirun_one_rank_no_oversubscribe 0 "^mpirun ${root_flag}-n 1 --bind-to none" oversubscribe -- \
    "$W" --dry-run -n1 "$probe"
  t mpirun_net_iface_replaces_loopback 0 \
    "btl_tcp_if_include eth7 --mca oob_tcp_if_include eth7 -x UCX_NET_DEVICES=eth7" ' lo( |$)|=lo' -- \
    "$W" --dry-run -n 2 --net eth7 "$probe"
  t mpirun_net_any_drops_pinning 0 "^mpirun ${root_flag}-n 2 --bind-to none ${probe}\$" - -- \
    "$W" --dry-run -n 2 --net any "$probe"
  t mpirun_recover_enables_recovery 0 " --enable-recovery " - -- "$W" --dry-run --recover -n 2 "$probe"
  t mpirun_virtual_nodes_exported 0 " -x A=b -x WEFT_VIRTUAL_NODES=2 ${probe} x\$" - -- \
    "$W" --dry-run -n 4 --virtual-nodes 2 --env A=b "$probe" x
  t mpirun_launcher_args_and_quoting 0 " --display-map ${probe} a\\\\ b --weft-ring-bytes=1MiB\$" - -- \
    "$W" --dry-run -n 2 --launcher-arg=--display-map -- "$probe" "a b" --weft-ring-bytes=1MiB
  t singleton_without_mpirun 0 "^env UCX_NET_DEVICES=lo ${probe}\$" mpirun -- \
    "${no_mpirun[@]}" "$W" --dry-run "$probe"
  t singleton_forced 0 "^env UCX_NET_DEVICES=lo WEFT_VIRTUAL_NODES=1 ${probe}\$" - -- \
    "$W" --dry-run --launcher none --virtual-nodes 1 "$probe"
  t slurm_chooses_srun_pmix 0 \
    "^env OMPI_MCA_btl_tcp_if_include=lo UCX_NET_DEVICES=lo ${srun_standin} --mpi=pmix ${probe}\$" - -- \
    "${slurm1[@]}" "$W" --dry-run "$probe"
  t slurm_overcommits_past_allocated_cpus 0 "--mpi=pmix -n 3 --overcommit ${probe}\$" - -- \
    "${slurm1[@]}" "$W" --dry-run -n 3 "$probe"
  t slurm_within_cpus_no_overcommit 0 "--mpi=pmix -n 2 ${probe}\$" overcommit -- \
    "${slurm1[@]}" "$W" --dry-run -n 2 "$probe"
  t slurm_multinode_not_pinned_to_lo 0 "^${srun_standin} --mpi=pmix ${probe}\$" - -- \
    "${slurm1[@]}" SLURM_JOB_NUM_NODES=2 SLURM_JOB_CPUS_PER_NODE='2(x2)' "$W" --dry-run "$probe"
  t slurm_recover_uses_mpirun_in_allocation 0 \
    "^mpirun ${root_flag}--bind-to none --enable-recovery ${pins} ${probe}\$" srun -- \
    "${slurm1[@]}" "$W" --dry-run --recover "$probe"
  t slurm_recover_oversubscribes_past_tasks 0 "-n 6 --oversubscribe --bind-to none --enable-recovery" - -- \
    "${slurm1[@]}" "$W" --dry-run --recover -n 6 "$probe"
  t slurm_without_srun_falls_back_to_mpirun 0 "^mpirun " - -- \
    "${slurm1[@]}" WEFTRUN_SRUN=/nonexistent/srun "$W" --dry-run -v "$probe"
  t verbose_says_why 0 "weft-run: launcher=srun \\(inside Slurm job 42\\)" - -- \
    "${slurm1[@]}" "$W" --dry-run --verbose "$probe"

  # Usage errors: status 2 (127 for what cannot be found) and a message that says what to fix.
  t error_zero_ranks 2 "error: -n wants a positive number of ranks, got '0'" - -- "$W" -n 0 "$probe"
  t error_ranks_not_a_number 2 "got 'four'" - -- "$W" --np=four "$probe"
  t error_more_virtual_nodes_than_ranks 2 "--virtual-nodes 3 is more than the 2 ranks" - -- \
    "$W" -n 2 --virtual-nodes 3 "$probe"
  t error_bad_launcher 2 "--launcher must be auto, srun, mpirun or none" - -- \
    "$W" --launcher pbs "$probe"
  t error_bad_interface 2 "--net wants an interface name" - -- "$W" --net 'lo; rm' "$probe"
  t error_bad_env 2 "--env wants VAR=VALUE, got '1A=b'" - -- "$W" -x 1A=b "$probe"
  t error_unknown_option 2 "unknown option '--nodes'" - -- "$W" --nodes 2 "$probe"
  t error_option_without_value 2 "option -n needs a value" - -- "$W" -n
  t error_no_application 2 "no application given" - -- "$W" --dry-run
  t error_application_missing 127 "application './no-such-app' not found" - -- "$W" ./no-such-app
  t error_many_ranks_without_launcher 2 "-n 2 needs mpirun or srun" - -- \
    "${no_mpirun[@]}" "$W" -n 2 "$probe"
  # Asked for one process while mpirun is there: the message names what was asked, not a search.
  t error_many_ranks_with_launcher_none 2 \
    "-n 2 asks for 2 ranks, but --launcher none \\(or WEFTRUN_LAUNCHER=none\\) runs one plain process" \
    "neither was found" -- "$W" --launcher none -n 2 "$probe"
  t error_forced_mpirun_missing 127 "launcher mpirun requested but '/nonexistent/mpirun' not found" - \
    -- "${no_mpirun[@]}" "$W" --launcher mpirun "$probe"
  t error_recover_with_forced_srun 2 "--recover needs mpirun" - -- \
    "${slurm1[@]}" "$W" --launcher srun --recover "$probe"
  t error_launcher_arg_without_launcher 2 "--launcher-arg has no launcher" - -- \
    "${no_mpirun[@]}" "$W" --launcher-arg=-v "$probe"
  t help_documents_every_option 0 \
    "-n, --np N.*" - -- "$W" --help
  local opt
  for opt in --virtual-nodes --recover --net --launcher --env --launcher-arg --dry-run --verbose \
      WEFTRUN_MPIRUN WEFTRUN_SRUN "Exit status"; do
    grep -qe "$opt" "$out" || { echo "FAIL help_documents_every_option: ${opt} missing"; failures=$((failures + 1)); }
  done
}

run_checks() {
  t mpirun_runs_ranks_that_talk 0 "^probe OK size=2 direct_launch=no virtual_nodes=2\$" - -- \
    "$W" -n 2 --virtual-nodes 2 "$probe"
  t mpirun_passes_exit_code 7 "^probe OK size=2" - -- "$W" -n 2 "$probe" 7
  t singleton_runs_one_rank 0 "^probe OK size=1 direct_launch=no virtual_nodes=unset\$" - -- \
    "${no_mpirun[@]}" "$W" "$probe"
  t singleton_passes_exit_code 5 "^probe OK size=1" - -- "${no_mpirun[@]}" "$W" "$probe" 5
}

case "$checks" in
  choice) choice_checks ;;
  run) run_checks ;;
  *) echo "usage: $0 --probe <mpi_probe> --checks choice|run" >&2; exit 2 ;;
esac

if ((failures > 0)); then
  echo "test_weft_run: ${failures} check(s) failed"
  exit 1
fi
echo "test_weft_run: all ${checks} checks passed"
