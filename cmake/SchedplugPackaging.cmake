# Debian packages, made with CPack from a build of the whole tree:
#
#   cmake --build build && (cd build && cpack -G DEB)
#
#   schedplug-sdk-dev  install component "sdk": the plugin headers, the CMake
#                      package (find_package(schedplug)) and the test kit;
#                      architecture-independent (headers and CMake files only).
#   schedplug          install component "runtime": schedplug-host and the
#                      schedplug CLI, and kube-scheduler-simulate (for
#                      `schedplug simulate`) when tools/dev/test.sh or
#                      demo.sh built it; Depends computed by dpkg-shlibdeps.
#
# Both install under /usr. cmake/packaging_test.cmake (CTest
# packaging_debian) builds them, unpacks them with dpkg into a scratch root
# and builds and inspects a plugin with what it unpacked.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME schedplug)
set(CPACK_PACKAGE_VENDOR schedplug)
set(CPACK_PACKAGE_CONTACT "schedplug maintainers <schedplug@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "C and C++ plugins for kube-scheduler")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL sdk runtime)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Programs without their debug info (a RelWithDebInfo build keeps it).
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_SDK_PACKAGE_NAME schedplug-sdk-dev)
set(CPACK_DEBIAN_SDK_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_SDK_PACKAGE_SECTION libdevel)
# C plugins need only a compiler and CMake; C++ plugins also nlohmann/json.
set(CPACK_DEBIAN_SDK_PACKAGE_RECOMMENDS "cmake (>= 3.20), nlohmann-json3-dev (>= 3)")
set(CPACK_DEBIAN_SDK_DESCRIPTION "schedplug plugin SDK: write kube-scheduler plugins in C or C++
The C ABI header, the header-only C++ layer, the CMake package
(find_package(schedplug) and schedplug_add_plugin) and the test kit.")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME schedplug)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "schedplug plugin host and CLI for kube-scheduler
schedplug-host loads C and C++ scheduler plugins (.so files) and serves
them to kube-scheduler; schedplug inspects plugins, checks configurations
and simulates kube-scheduler on cluster dumps (kube-scheduler-simulate).")

include(CPack)

if(SCHEDPLUG_BUILD_TESTS AND TARGET schedplug-host AND TARGET schedplug)
  add_test(NAME packaging_debian
    COMMAND ${CMAKE_COMMAND}
      -DBUILD_DIR=${CMAKE_BINARY_DIR}
      -DCPACK=${CMAKE_CPACK_COMMAND}
      -DEXAMPLES_DIR=${PROJECT_SOURCE_DIR}/sdk/examples
      -DWORK_DIR=${CMAKE_BINARY_DIR}/packaging_test
      -DGENERATOR=${CMAKE_GENERATOR}
      -DC_COMPILER=${CMAKE_C_COMPILER}
      -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
      -P ${CMAKE_CURRENT_LIST_DIR}/packaging_test.cmake)
  set_tests_properties(packaging_debian PROPERTIES TIMEOUT 900 LABELS packaging)
endif()
