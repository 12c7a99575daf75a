# Sanitizer builds: -DSCHEDPLUG_SANITIZE=address,undefined or =thread
# instruments everything this project compiles (host, CLI, SDK, plugins,
# test plugins, tests) in that build directory. Use one build directory per
# sanitizer (tools/dev/test.sh uses build-asan/ and build-tsan/); the test
# command runs the C++ suites in them with the options in tools/sanitizers/.
#
# Any sanitizer report is fatal (-fno-sanitize-recover), so a finding fails
# the test that caused it instead of scrolling past.
set(SCHEDPLUG_SANITIZE "" CACHE STRING
    "Sanitizers for every target: address,undefined | thread | empty for none")
set_property(CACHE SCHEDPLUG_SANITIZE PROPERTY STRINGS
             "" "address,undefined" "address" "undefined" "thread")

if(SCHEDPLUG_SANITIZE)
  string(REPLACE "," ";" _schedplug_sanitizers "${SCHEDPLUG_SANITIZE}")
  foreach(_s ${_schedplug_sanitizers})
    if(NOT _s MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR
        "SCHEDPLUG_SANITIZE=${SCHEDPLUG_SANITIZE}: unknown sanitizer '${_s}'; "
        "use address,undefined or thread")
    endif()
  endforeach()
  if("thread" IN_LIST _schedplug_sanitizers AND "address" IN_LIST _schedplug_sanitizers)
    message(FATAL_ERROR
      "SCHEDPLUG_SANITIZE=${SCHEDPLUG_SANITIZE}: ThreadSanitizer cannot be combined "
      "with AddressSanitizer; configure two build directories")
  endif()
  add_compile_options(-fsanitize=${SCHEDPLUG_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${SCHEDPLUG_SANITIZE})
  message(STATUS "schedplug: sanitizers ${SCHEDPLUG_SANITIZE} on every target")
endif()

# schedplug_sanitizer_regex_workaround(SOURCE...): GCC 12 reports a false
# "may be used uninitialized" inside libstdc++'s std::regex
# (bits/regex_compiler.h, _M_... of std::function) when the sanitizers change
# inlining. Only in sanitizer builds with GCC, and only for the listed
# translation units (the ones that use std::regex), that one warning stays a
# warning instead of an error; every other warning is still an error there.
function(schedplug_sanitizer_regex_workaround)
  if(SCHEDPLUG_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_OPTIONS
                 -Wno-error=maybe-uninitialized)
  endif()
endfunction()
