# Fuzzing with libFuzzer: -DSCHEDPLUG_FUZZ=ON (clang only) builds the fuzz
# targets of fuzz/ as libFuzzer binaries, with AddressSanitizer and
# UndefinedBehaviorSanitizer on every target of that build directory, so the
# same tree also runs the test suites under those sanitizers.
# tools/dev/sanitize.sh uses build-asan/; docs/fuzzing.md says how to run them.
#
# Without it (every other build) the same fuzz targets are linked with a
# replay main instead and ctest runs them over their seed corpus and
# regressions, so no build needs clang to keep the corpus green.
option(SCHEDPLUG_FUZZ "Build the libFuzzer targets of fuzz/ (needs clang)" OFF)

if(SCHEDPLUG_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR
     NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR
      "SCHEDPLUG_FUZZ=ON needs clang (libFuzzer); configure a separate build "
      "directory with -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "
      "(Debian: apt-get install clang libclang-rt-14-dev)")
  endif()
  if(SCHEDPLUG_SANITIZE)
    message(FATAL_ERROR
      "SCHEDPLUG_FUZZ=ON already builds with address,undefined; leave "
      "SCHEDPLUG_SANITIZE empty in the fuzz build directory")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                      -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # The plugins' sanitizer references resolve against the instrumented
  # host or test binary that loads them (sdk/cmake/SchedplugPlugin.cmake).
  set(SCHEDPLUG_PLUGIN_ALLOW_UNDEFINED ON)
  message(STATUS "schedplug: libFuzzer build (address,undefined on every target)")
endif()
