# weft_add_mpi_test(<name> NP <n> COMMAND <exe> [args...] [ENV VAR=value ...] [TIMEOUT s])
# Adds a CTest test that runs COMMAND under mpirun with NP ranks, oversubscribed on this
# machine's cores and pinned to loopback and shared memory (the only network Weft may use here).
set(WEFT_MPIRUN_FLAGS --allow-run-as-root --oversubscribe --bind-to none
    --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo
    -x UCX_NET_DEVICES=lo -x UCX_WARN_UNUSED_ENV_VARS=n
    CACHE STRING "Flags every Weft test and example passes to mpirun")

function(weft_add_mpi_test name)
  cmake_parse_arguments(A "" "NP;TIMEOUT" "COMMAND;ENV" ${ARGN})
  if(NOT A_NP)
    set(A_NP 2)
  endif()
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 120)
  endif()
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${WEFT_MPIRUN_FLAGS} -n ${A_NP} ${A_COMMAND})
  set_tests_properties(${name} PROPERTIES
    TIMEOUT ${A_TIMEOUT}
    ENVIRONMENT "UCX_NET_DEVICES=lo;OMPI_MCA_rmaps_base_oversubscribe=1;${A_ENV}"
    RESOURCE_LOCK mpirun)
endfunction()
