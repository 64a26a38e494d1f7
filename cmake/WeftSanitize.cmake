# WEFT_SANITIZE (a comma-separated list, as -fsanitize= takes it): every C and C++ target of this
# build is compiled and linked with those sanitizers. address and undefined go together; thread
# goes alone (the compilers refuse thread with address). UBSan findings are fatal, so a test
# that trips one fails instead of printing and passing.

# Called at the end of each folder of tests that run programs (multirank, examples, ...): in a
# sanitizer build, a report fails the test that printed it, also where the test expects its
# program to fail (exit code 2, a killed rank) and would pass on the exit status alone.
# GoogleTest binaries need no pattern: a report ends them with a failing status.
function(weft_fail_on_sanitizer_reports)
  if(WEFT_SANITIZE STREQUAL "")
    return()
  endif()
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    set_property(TEST ${t} APPEND PROPERTY FAIL_REGULAR_EXPRESSION "ERROR: AddressSanitizer"
                 "runtime error: " "WARNING: ThreadSanitizer" "ERROR: LeakSanitizer")
  endforeach()
endfunction()

if(WEFT_SANITIZE STREQUAL "")
  return()
endif()
if(WEFT_FUZZ)
  message(FATAL_ERROR "WEFT_FUZZ builds its own ASan+UBSan instrumentation; leave WEFT_SANITIZE "
          "empty in a fuzz build")
endif()
string(REPLACE "," ";" _weft_san_list "${WEFT_SANITIZE}")
foreach(s IN LISTS _weft_san_list)
  if(NOT s MATCHES "^(address|undefined|thread|leak)$")
    message(FATAL_ERROR "WEFT_SANITIZE: unknown sanitizer '${s}' (known: address, undefined, "
            "thread, leak; e.g. -DWEFT_SANITIZE=address,undefined)")
  endif()
endforeach()
if("thread" IN_LIST _weft_san_list AND ("address" IN_LIST _weft_san_list OR
                                       "leak" IN_LIST _weft_san_list))
  message(FATAL_ERROR "WEFT_SANITIZE=${WEFT_SANITIZE}: thread cannot be combined with address "
          "or leak; build them in separate folders")
endif()
set(_weft_san_flags -fsanitize=${WEFT_SANITIZE} -fno-omit-frame-pointer)
if("undefined" IN_LIST _weft_san_list)
  list(APPEND _weft_san_flags -fno-sanitize-recover=undefined)
endif()
foreach(f IN LISTS _weft_san_flags)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:${f}>)
endforeach()
add_link_options(-fsanitize=${WEFT_SANITIZE})
# -O1 and line tables only (-g1) in place of RelWithDebInfo's -O2 -g: -O1 is what the ASan and
# TSan documentation advise, and -g1 keeps every frame of a report, inlined ones included, with
# its file and line (only local variables go). It halves this build's compile time
# (src/core/submitter.cpp with ASan+UBSan: 60 s at -O2 -g, 32 s at -O1 -g1), which CI pays on
# every run.
foreach(lang C CXX)
  set(CMAKE_${lang}_FLAGS_RELWITHDEBINFO "-O1 -g1 -DNDEBUG")
endforeach()
message(STATUS "Weft: built with -fsanitize=${WEFT_SANITIZE}")
