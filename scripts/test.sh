#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test (units, multi-rank
# runs under mpirun on loopback, the examples, a real local Slurm, GPU tests that skip without a
# GPU). This is what CI runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# WEFT_* names are Weft's runtime settings (an unknown one stops every Weft program); the build
# folder was WEFT_BUILD_DIR before, and that spelling is still taken here, with a note.
if [[ -n "${WEFT_BUILD_DIR:-}" ]]; then
  echo "$(basename "$0"): WEFT_BUILD_DIR is now WEFTDEV_BUILD_DIR; using ${WEFT_BUILD_DIR}" >&2
  export WEFTDEV_BUILD_DIR="${WEFTDEV_BUILD_DIR:-$WEFT_BUILD_DIR}"
  unset WEFT_BUILD_DIR
fi
# --sanitize LIST (address,undefined or thread): a build of its own in build-sanitize-<LIST>
# (WEFT_SANITIZE=LIST, CMakeLists.txt) and the tests that the sanitizers can judge:
#   address,undefined  units, multi-rank runs and examples (not the Slurm, namespace-host,
#                      launcher and GPU ones: their daemons and hosts are not Weft's code),
#                      in two passes: the units, the examples and the multi-rank runs whose
#                      every rank ends cleanly run with LeakSanitizer at exit as well (the leak
#                      pass); the rest (a rank killed on purpose exits without its destructors:
#                      its "leaks" are not leaks) without it. Each test runs once;
#   thread             the same units, multi-rank runs and examples (TSan keeps the longest
#                      history, so the stack of a race's first access can be restored and
#                      matched against tests/tsan.supp's third-party entries).
# Any report fails its test (tests/CMakeLists.txt adds the pattern; UBSan and TSan halt).
# Other arguments go to ctest (and replace the default selection; no leak pass then).
sanitize=""
ctest_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sanitize) sanitize="${2:?--sanitize needs a list, e.g. address,undefined}"; shift 2 ;;
    --sanitize=*) sanitize="${1#--sanitize=}"; shift ;;
    *) ctest_args+=("$1"); shift ;;
  esac
done
"$root/scripts/install-deps.sh"
if [[ -z "$sanitize" ]]; then
  build="${WEFTDEV_BUILD_DIR:-$root/build}"
  WEFTDEV_BUILD_DIR="$build" "$root/scripts/build.sh" -DWEFT_BUILD_BENCH=OFF
else
  build="${WEFTDEV_BUILD_DIR:-$root/build-sanitize-${sanitize//,/-}}"
  WEFTDEV_BUILD_DIR="$build" "$root/scripts/build.sh" -DWEFT_BUILD_BENCH=OFF \
    -DWEFT_SANITIZE="$sanitize"
  # Leaks are not judged in this pass: Open MPI and UCX keep allocations to exit by design.
  # UCX's malloc hooks would patch the allocator the sanitizer runtime owns.
  export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:detect_stack_use_after_return=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=7:suppressions=$root/tests/tsan.supp"
  export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
  # The leak pass's tests: the units, the examples and the multi-rank runs whose every rank
  # ends cleanly.
  leak_tests='^[a-z]*[A-Z][A-Za-z0-9_]*[.]|^net[.](single_rank|messages|bulk)|^multirank_(np2|np2_vnodes2|singleton|objects_np2_vnodes2|pg_np4_vnodes2)$|^exit_code_|^example_|^startup_|^ops_cli_two_jobs'
  leak_pass=0
  if [[ ${#ctest_args[@]} -eq 0 ]]; then
    ctest_args=(-LE 'slurm|hosts|launchers|gpu|soak')  # the soak: in the plain pass
    if [[ "$sanitize" == *address* ]]; then
      leak_pass=1
      ctest_args+=(-E "$leak_tests")  # they run once, in the leak pass below
    fi
  fi
fi
cd "$build"
# Loopback only, whatever the machine has.
export UCX_NET_DEVICES=lo OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
ctest --output-on-failure -j2 --timeout 600 "${ctest_args[@]}"
if [[ -n "$sanitize" ]] && ((leak_pass)); then
  echo "== leak pass: LeakSanitizer at the exit of units, examples and clean multi-rank runs"
  # Suppressions name third-party code only (tests/lsan.supp says why for each). Open MPI's
  # components stay mapped (no dlclose) so that their frames can be symbolized and matched; the
  # slow unwinder gives the whole stack a suppression is matched against.
  # intercept_tls_get_addr=0: the runtime of GCC 12 (and of LLVM up to 16) takes a dynamic TLS
  # block whose address is 16 past a page boundary for a glibc 2.19 block with a header, and
  # reads a bogus range out of the two words before it; its tracer then dies as it scans that
  # range at exit ("Tracer caught signal 11: addr=0x4bb8", "LeakSanitizer has encountered a
  # fatal error"; google/sanitizers#1322). Where blocks land depends on the allocation history,
  # so a test that hits it hits it on every try (CI: multirank_pg_np4_vnodes2, twice). Without
  # the interceptor, dynamic TLS (that of dlopen'ed modules: Open MPI's components, UCX's
  # transports) is not scanned; Weft's own thread_local state sits in static TLS, which is.
  ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0:fast_unwind_on_malloc=0:intercept_tls_get_addr=0" \
    LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0" \
    OMPI_MCA_mca_base_component_disable_dlclose=1 \
    ctest --output-on-failure -j2 --timeout 600 \
    -R "$leak_tests"
fi
