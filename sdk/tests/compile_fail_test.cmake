# Each file in compile_fail/ must NOT compile, and the compiler's message must
# contain the text after "// expect: " on its first line: plugin.hpp turns
# mistakes that would otherwise silently drop a hook into clear errors.
# The .c files (the C kit's old forms) are compiled as C11 with CC.
#   cmake -DCXX=... -DCC=... -DINCLUDE=... -DDIR=... -P compile_fail_test.cmake
file(GLOB sources ${DIR}/*.cpp ${DIR}/*.c)
if(NOT sources)
  message(FATAL_ERROR "no sources in ${DIR}")
endif()
foreach(src ${sources})
  file(STRINGS ${src} first LIMIT_COUNT 1)
  string(REGEX REPLACE "^(//|/\\*) expect: ([^*]*)( \\*/)?$" "\\2" expect "${first}")
  if(src MATCHES "\\.c$")
    set(compile ${CC} -std=c11 -fsyntax-only)
  else()
    set(compile ${CXX} -std=c++20 -fsyntax-only)
  endif()
  execute_process(COMMAND ${compile} -I${INCLUDE} ${src}
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(rc EQUAL 0)
    message(FATAL_ERROR "${src} compiled, but must fail with: ${expect}")
  endif()
  string(FIND "${err}" "${expect}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${src} failed without the expected message \"${expect}\":\n${err}")
  endif()
  get_filename_component(name ${src} NAME)
  message(STATUS "${name}: rejected as expected")
endforeach()
