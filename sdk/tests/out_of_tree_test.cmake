# The SDK as a plugin author gets it: configure sdk/ on its own (only CMake
# and a compiler), install it into a fresh prefix, build sdk/examples against
# the prefix and against build-tree packages in separate CMake processes,
# then check and load the plugins they produced. Run by CTest as
#   cmake -DBUILD_DIR=... -DSDK_DIR=... -DEXAMPLES_DIR=... -DWORK_DIR=...
#         -DGENERATOR=... -DC_COMPILER=... -DCXX_COMPILER=... -DSMOKE=...
#         [-DLAUNCHER=ccache] -DREADME=... -P out_of_tree_test.cmake
# No network: the C++ layer's only dependency (nlohmann_json) comes from the
# system.

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(compilers -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(LAUNCHER)  # the top-level build's compiler launcher (ccache), if any
  list(APPEND compilers -DCMAKE_C_COMPILER_LAUNCHER=${LAUNCHER}
                        -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()

# 1. sdk/ is a CMake project of its own: configure it alone (no build type,
#    no dependency) and install everything it has into a fresh prefix.
run("configuring sdk/ on its own" ${CMAKE_COMMAND} -S ${SDK_DIR}
    -B ${WORK_DIR}/sdk-build -G ${GENERATOR} ${compilers})
run("installing the SDK" ${CMAKE_COMMAND} --install ${WORK_DIR}/sdk-build
    --prefix ${prefix})
foreach(f include/schedplug/plugin.h include/schedplug/plugin.hpp
          lib/cmake/schedplug/schedplugConfig.cmake
          lib/cmake/schedplug/schedplugConfigVersion.cmake
          lib/cmake/schedplug/SchedplugPlugin.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the SDK install lacks ${f}")
  endif()
endforeach()
# The host's rules are the kit's, not the authors' include directory's.
if(EXISTS ${prefix}/include/schedplug/runtime.hpp)
  message(FATAL_ERROR "the SDK install puts the host's rules (runtime.hpp) "
                      "in the authors' include directory")
endif()
if(NOT EXISTS ${prefix}/lib/schedplug/kit-rules/schedplug/runtime.hpp)
  message(FATAL_ERROR "the SDK install lacks the test kit's rules "
                      "(lib/schedplug/kit-rules/schedplug/runtime.hpp)")
endif()
file(GLOB_RECURSE installed_libs ${prefix}/*.so ${prefix}/*.a)
if(installed_libs)
  message(FATAL_ERROR "the SDK install must be headers only, found: ${installed_libs}")
endif()
# The top-level build's "sdk" component installs the same files.
run("installing the SDK component of the top-level build" ${CMAKE_COMMAND}
    --install ${BUILD_DIR} --component sdk --prefix ${WORK_DIR}/prefix-tree)
file(GLOB_RECURSE standalone_files RELATIVE ${prefix} ${prefix}/*)
file(GLOB_RECURSE tree_files RELATIVE ${WORK_DIR}/prefix-tree ${WORK_DIR}/prefix-tree/*)
list(SORT standalone_files)
list(SORT tree_files)
if(NOT standalone_files STREQUAL tree_files)
  message(FATAL_ERROR "sdk/ alone installs\n  ${standalone_files}\nbut the "
                      "top-level build's sdk component installs\n  ${tree_files}")
endif()

# 2. Build the examples in a separate CMake process, with no build type (as
#    the README's command does): the plugins must still be optimized.
#    build_examples(<label> <dir> <cmake args>...) configures and builds.
function(build_examples label dir)
  run("configuring sdk/examples against ${label}"
      ${CMAKE_COMMAND} -S ${EXAMPLES_DIR} -B ${dir} -G ${GENERATOR} ${compilers}
      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON ${ARGN})
  run("building sdk/examples against ${label}" ${CMAKE_COMMAND} --build ${dir} -j 2)
  file(READ ${dir}/compile_commands.json commands)
  foreach(src spare_cpu.cpp zone_required.c)
    string(REGEX MATCH "\"command\": \"[^\"]*${src}\"" command "${commands}")
    if(NOT command MATCHES " -O[23s] ")
      message(FATAL_ERROR "with no CMAKE_BUILD_TYPE, schedplug_add_plugin must "
                          "compile ${src} optimized (${label}); got: ${command}")
    endif()
  endforeach()
endfunction()
build_examples("the installed SDK" ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${prefix})
# The build-tree packages, used without installing: sdk/ configured alone,
# and the top-level build's sdk/ directory.
build_examples("the standalone build tree" ${WORK_DIR}/build-standalone-tree
               -Dschedplug_DIR=${WORK_DIR}/sdk-build)
build_examples("the top-level build tree" ${WORK_DIR}/build-tree
               -Dschedplug_DIR=${BUILD_DIR}/sdk)

# 3. Check each plugin's exports and dependencies, then load it.
find_program(NM nm)
find_program(READELF readelf)
foreach(plugin spare_cpu:SpareCpu zone_required:ZoneRequired node_number:NodeNumber
               node_number_c:NodeNumber)
  string(REPLACE ":" ";" parts ${plugin})
  list(GET parts 0 stem)
  list(GET parts 1 name)
  set(so ${WORK_DIR}/build/${stem}.so)
  foreach(other build-standalone-tree build-tree)
    if(NOT EXISTS ${WORK_DIR}/${other}/${stem}.so)
      message(FATAL_ERROR "building against a build tree (${other}) did not produce ${stem}.so")
    endif()
    run("loading ${other}/${stem}.so" ${SMOKE} ${WORK_DIR}/${other}/${stem}.so "{}")
  endforeach()
  if(NOT EXISTS ${so})
    message(FATAL_ERROR "schedplug_add_plugin(${stem} ...) did not produce ${so}")
  endif()
  if(NM)
    run("nm ${stem}.so" ${NM} -D --defined-only ${so})
    string(REGEX MATCHALL "[^\n]+" lines "${last_output}")
    foreach(line ${lines})
      if(NOT line MATCHES " schedplug_plugin_v1$")
        message(FATAL_ERROR "${stem}.so exports more than schedplug_plugin_v1: ${line}")
      endif()
    endforeach()
    if(NOT last_output MATCHES "schedplug_plugin_v1")
      message(FATAL_ERROR "${stem}.so does not export schedplug_plugin_v1")
    endif()
  endif()
  if(READELF)
    run("readelf ${stem}.so" ${READELF} -d ${so})
    if(last_output MATCHES "NEEDED[^\n]*(schedplug|grpc|protobuf|boost|spdlog|yaml|fmt)")
      message(FATAL_ERROR "${stem}.so depends on a host library:\n${last_output}")
    endif()
    if(stem MATCHES "^(zone_required|node_number_c)$" AND last_output MATCHES "libstdc\\+\\+")
      message(FATAL_ERROR "the C plugin ${stem}.so must not need libstdc++")
    endif()
  endif()
  run("loading ${stem}.so" ${SMOKE} ${so} "{}")
  message(STATUS "${stem}.so:\n${last_output}")
  if(NOT last_output MATCHES "name=${name} version=0.1.0")
    message(FATAL_ERROR "${stem}.so reported the wrong name or version:\n${last_output}")
  endif()
  set(smoke_${stem} "${last_output}")
endforeach()

# The examples' own tests (the test kit, from C++ and from C) pass against
# the installed SDK.
get_filename_component(cmake_bin ${CMAKE_COMMAND} DIRECTORY)
run("the examples' tests (ctest)" ${cmake_bin}/ctest --test-dir ${WORK_DIR}/build
    --output-on-failure)
if(NOT last_output MATCHES "100% tests passed, 0 tests failed out of 3")
  message(FATAL_ERROR "the examples' kit tests did not all run and pass:\n${last_output}")
endif()

# The hooks behave: SpareCpu rejects the full node (300m spare < 500m) and
# its linear normalization puts the roomy node first; ZoneRequired rejects
# the node without a zone label.
foreach(expect "filter roomy code=0" "filter full code=2 reason=node\\(s\\) would keep less than 500m CPU spare"
               "score roomy code=0 raw=2750" "normalize code=0 roomy=100 full=0")
  if(NOT smoke_spare_cpu MATCHES "${expect}")
    message(FATAL_ERROR "SpareCpu: expected \"${expect}\" in:\n${smoke_spare_cpu}")
  endif()
endforeach()
foreach(expect "filter roomy code=0" "filter full code=3 reason=node\\(s\\) had no zone label")
  if(NOT smoke_zone_required MATCHES "${expect}")
    message(FATAL_ERROR "ZoneRequired: expected \"${expect}\" in:\n${smoke_zone_required}")
  endif()
endforeach()
execute_process(COMMAND ${SMOKE} ${WORK_DIR}/build/spare_cpu.so "{\"headroomMillicores\": -1}"
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(rc EQUAL 0 OR NOT err MATCHES "headroomMillicores")
  message(FATAL_ERROR "bad args must fail create() naming the arg, got (${rc}): ${err}")
endif()

# A C plugin needs nothing but the SDK: with nlohmann_json hidden, a C-only
# project builds, and a C++ plugin stops at configure time with a message
# that names the missing package.
file(MAKE_DIRECTORY ${WORK_DIR}/c-only)
configure_file(${EXAMPLES_DIR}/zone_required.c ${WORK_DIR}/c-only/zone_required.c COPYONLY)
file(WRITE ${WORK_DIR}/c-only/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.20)
project(c_only LANGUAGES C)
find_package(schedplug REQUIRED)
schedplug_add_plugin(zone_required zone_required.c)
]=])
run("configuring a C-only plugin without nlohmann_json"
    ${CMAKE_COMMAND} -S ${WORK_DIR}/c-only -B ${WORK_DIR}/c-only/build -G ${GENERATOR}
    ${compilers} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON)
run("building a C-only plugin without nlohmann_json"
    ${CMAKE_COMMAND} --build ${WORK_DIR}/c-only/build)
run("loading the C-only plugin" ${SMOKE} ${WORK_DIR}/c-only/build/zone_required.so "{}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${EXAMPLES_DIR} -B ${WORK_DIR}/no-json -G ${GENERATOR}
          ${compilers} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \n]+" " " err_flat "${err}")
if(rc EQUAL 0 OR NOT err_flat MATCHES "spare_cpu.*C\\+\\+ plugins need nlohmann/json 3.*nlohmann-json3-dev")
  message(FATAL_ERROR "a C++ plugin without nlohmann_json must fail to configure "
                      "with a message naming it, got (${rc}):\n${out}\n${err}")
endif()

# A missing symbol is a link error, not a load failure in the host.
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/undefined_symbol
          -B ${WORK_DIR}/undefined -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix}
          ${compilers}
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring undefined_symbol failed:\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/undefined
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "undefined reference to .schedplug_test_function_defined_nowhere")
  message(FATAL_ERROR "a plugin with an undefined symbol must fail to link "
                      "(--no-undefined), got (${rc}):\n${out}\n${err}")
endif()

# 4. The README's examples are these files, verbatim.
file(READ ${README} readme)
foreach(f spare_cpu.cpp zone_required.c spare_cpu_test.cpp CMakeLists.txt)
  file(READ ${EXAMPLES_DIR}/${f} text)
  string(FIND "${readme}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "sdk/README.md's copy of examples/${f} is out of date; paste the file in again")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "out-of-tree plugin build against the installed SDK: OK")
