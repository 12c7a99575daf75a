# The Debian packages as a user gets them: build them with CPack from the
# build tree, install them with dpkg into a scratch root (its own admin
# directory; never the system), build sdk/examples and their kit tests
# against the SDK there, run the tests, and inspect the result with the
# schedplug CLI from there. Run by CTest as
#   cmake -DBUILD_DIR=... -DCPACK=... -DEXAMPLES_DIR=... -DWORK_DIR=...
#         -DGENERATOR=... -DC_COMPILER=... -DCXX_COMPILER=...
#         -P packaging_test.cmake

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

foreach(tool dpkg dpkg-deb dpkg-shlibdeps)
  find_program(${tool}_path ${tool})
  if(NOT ${tool}_path)
    message(FATAL_ERROR "${tool} is missing; it comes with Debian's dpkg and "
                        "dpkg-dev packages (tools/dev/install-deps.sh)")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
set(root ${WORK_DIR}/root)

# 1. The packages.
run("cpack -G DEB" ${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake
    -B ${WORK_DIR}/packages)
file(GLOB sdk_deb ${WORK_DIR}/packages/schedplug-sdk-dev_*_all.deb)
file(GLOB runtime_deb ${WORK_DIR}/packages/schedplug_*.deb)
if(NOT sdk_deb OR NOT runtime_deb)
  file(GLOB made ${WORK_DIR}/packages/*.deb)
  message(FATAL_ERROR "cpack did not make schedplug-sdk-dev_*_all.deb and "
                      "schedplug_*.deb; it made: ${made}")
endif()
run("reading ${runtime_deb}" ${dpkg-deb_path} -f ${runtime_deb} Package Depends)
if(NOT last_output MATCHES "Package: schedplug\n" OR NOT last_output MATCHES "Depends:.*libgrpc")
  message(FATAL_ERROR "the schedplug package must depend on the host's shared "
                      "libraries (dpkg-shlibdeps), got:\n${last_output}")
endif()
run("listing ${sdk_deb}" ${dpkg-deb_path} -c ${sdk_deb})
foreach(f include/schedplug/plugin.h include/schedplug/plugin.hpp
          include/schedplug/testing.hpp include/schedplug/testing.h
          include/schedplug/testing/events.hpp
          /schedplug/schedplugConfig.cmake /schedplug/SchedplugPlugin.cmake)
  if(NOT last_output MATCHES "/usr/[^\n]*${f}")
    message(FATAL_ERROR "schedplug-sdk-dev lacks ${f}:\n${last_output}")
  endif()
endforeach()
if(last_output MATCHES "/usr/bin/")
  message(FATAL_ERROR "schedplug-sdk-dev must not hold programs:\n${last_output}")
endif()

# 2. Install both with dpkg into the scratch root. Their Depends name system
#    packages that this empty root does not list, hence --force-depends.
file(MAKE_DIRECTORY ${root}/var/lib/dpkg/info ${root}/var/lib/dpkg/updates)
file(TOUCH ${root}/var/lib/dpkg/status ${root}/var/lib/dpkg/available)
run("dpkg -i into ${root}" ${dpkg_path} --root=${root}
    --admindir=${root}/var/lib/dpkg --force-depends --force-not-root
    --force-script-chrootless --log=${WORK_DIR}/dpkg.log -i ${sdk_deb} ${runtime_deb})
run("dpkg -l in ${root}" ${dpkg_path} --root=${root} --admindir=${root}/var/lib/dpkg -l)
foreach(p schedplug schedplug-sdk-dev)
  if(NOT last_output MATCHES "\nii  ${p} ")
    message(FATAL_ERROR "dpkg did not install ${p} into ${root}:\n${last_output}")
  endif()
endforeach()

# 3. A plugin built against the SDK in the root only (no package registry,
#    the root first on the search path), checked by the CLI in the root.
run("configuring sdk/examples against ${root}/usr"
    ${CMAKE_COMMAND} -S ${EXAMPLES_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${root}/usr -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
file(STRINGS ${WORK_DIR}/build/CMakeCache.txt found REGEX "^schedplug_DIR:")
if(NOT found MATCHES "${root}/usr/")
  message(FATAL_ERROR "find_package(schedplug) did not use the unpacked SDK: ${found}")
endif()
run("building sdk/examples against ${root}/usr" ${CMAKE_COMMAND} --build ${WORK_DIR}/build -j 2)
get_filename_component(cmake_bin ${CMAKE_COMMAND} DIRECTORY)
run("the examples' kit tests against ${root}/usr" ${cmake_bin}/ctest
    --test-dir ${WORK_DIR}/build --output-on-failure)
run("schedplug inspect from ${root}" ${root}/usr/bin/schedplug inspect
    ${WORK_DIR}/build/spare_cpu.so)
if(NOT last_output MATCHES "SpareCpu")
  message(FATAL_ERROR "the unpacked schedplug inspect did not report SpareCpu:\n${last_output}")
endif()
message(STATUS "schedplug inspect spare_cpu.so:\n${last_output}")
run("schedplug-host --help from ${root}" ${root}/usr/bin/schedplug-host --help)

file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "Debian packages build, install with dpkg, and work: OK")
