# schedplug_add_plugin(<name> <source>... [OUTPUT_DIRECTORY <dir>]
#                      [OUTPUT_NAME <file-stem>])
#
# Builds a schedplug plugin: a MODULE library `<name>.so` (no "lib" prefix)
# that schedplug-host loads with dlopen(RTLD_NOW | RTLD_LOCAL). It is built
#   - with hidden visibility, and a linker export list of just
#     schedplug_plugin_v1, so plugins cannot clash with each other or the host;
#   - position-independent;
#   - with -Wl,--no-undefined, so a missing symbol is a link error here
#     instead of a load failure in the host (except in clang sanitizer
#     builds, see below);
#   - against schedplug::sdk only (headers): it never links the host's
#     libraries. Link your own dependencies with target_link_libraries(); link
#     static ones where you can, since the host image may not have them.
# C sources are compiled as C11, C++ sources as C++20. When the project
# sets no build type (no -DCMAKE_BUILD_TYPE, single-config generator), the
# plugin is compiled with the Release flags (-O3 -DNDEBUG on GCC and Clang)
# instead of none: set -DCMAKE_BUILD_TYPE=Debug for a debug build.
# C++ sources need nlohmann/json 3 (schedplug/plugin.hpp reads args with it);
# C sources need nothing but the SDK.
include_guard(GLOBAL)

function(schedplug_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "OUTPUT_DIRECTORY;OUTPUT_NAME" "")
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "schedplug_add_plugin(${name}): no source files; "
      "write schedplug_add_plugin(${name} my_plugin.cpp)")
  endif()
  if(NOT TARGET schedplug::sdk)
    message(FATAL_ERROR
      "schedplug_add_plugin(${name}): target schedplug::sdk is missing; "
      "call find_package(schedplug REQUIRED) first")
  endif()

  set(cxx_sources ${arg_UNPARSED_ARGUMENTS})
  list(FILTER cxx_sources INCLUDE REGEX "\\.(cpp|cc|cxx|c\\+\\+|C)$")
  if(cxx_sources AND NOT TARGET nlohmann_json::nlohmann_json)
    message(FATAL_ERROR
      "schedplug_add_plugin(${name}): C++ plugins need nlohmann/json 3, "
      "which schedplug/plugin.hpp reads args with, and it was not found. "
      "Install it (Debian/Ubuntu: apt-get install nlohmann-json3-dev) or "
      "point CMAKE_PREFIX_PATH at it, then configure again. C plugins "
      "do not need it.")
  endif()

  # The export list sits next to this file, in the tree and when installed.
  set(map ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/schedplug-plugin.map)
  add_library(${name} MODULE ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE schedplug::sdk)
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON
    LINK_DEPENDS ${map})
  # Respect a newer standard the caller already chose.
  if(NOT DEFINED CMAKE_CXX_STANDARD OR CMAKE_CXX_STANDARD LESS 20)
    set_target_properties(${name} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON)
  endif()
  # clang links the sanitizer runtimes into executables only: a plugin
  # compiled with clang's -fsanitize refers to __asan_*/__ubsan_* symbols
  # that the (instrumented) host exports at load time, so --no-undefined
  # cannot hold there. Such builds set SCHEDPLUG_PLUGIN_ALLOW_UNDEFINED, or
  # are recognised by -fsanitize in CMAKE_<LANG>_FLAGS.
  set(no_undefined LINKER:--no-undefined)
  if(SCHEDPLUG_PLUGIN_ALLOW_UNDEFINED OR
     (CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND
      "${CMAKE_C_FLAGS} ${CMAKE_CXX_FLAGS}" MATCHES "-fsanitize="))
    set(no_undefined)
  endif()
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${name} PRIVATE
      ${no_undefined}
      LINKER:--exclude-libs,ALL
      LINKER:--version-script=${map})
  endif()
  # No build type means no optimization flags at all in CMake: a plugin runs
  # in every scheduling cycle, so default to the Release flags.
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(NOT CMAKE_BUILD_TYPE AND NOT multi_config)
    foreach(lang C CXX)
      separate_arguments(flags NATIVE_COMMAND "${CMAKE_${lang}_FLAGS_RELEASE}")
      target_compile_options(${name} PRIVATE
        "$<$<COMPILE_LANGUAGE:${lang}>:${flags}>")
    endforeach()
  endif()
  if(arg_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${arg_OUTPUT_DIRECTORY})
  endif()
  if(arg_OUTPUT_NAME)
    set_target_properties(${name} PROPERTIES OUTPUT_NAME ${arg_OUTPUT_NAME})
  endif()
endfunction()

# The language levels the test kit needs (C++20, C11), unless the project
# asks for newer ones.
function(_schedplug_test_kit_standards target)
  if(NOT DEFINED CMAKE_CXX_STANDARD OR CMAKE_CXX_STANDARD LESS 20)
    set_target_properties(${target} PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON)
  endif()
  if(NOT DEFINED CMAKE_C_STANDARD OR CMAKE_C_STANDARD LESS 11)
    set_target_properties(${target} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
  endif()
endfunction()

# schedplug_add_plugin_test(<name> <source>... [PLUGINS <plugin-target>...])
#
# Builds a test program that uses the test kit (schedplug/testing.hpp, or
# schedplug/testing.h from C) and registers it with CTest. It enables
# testing in the calling directory (enable_testing(), deferred to the end of
# that directory's CMakeLists.txt, since a function's own call would not
# last), so `ctest --test-dir <build>` runs the tests. For each plugin target T in PLUGINS, the test is
# built after T and gets the path of T's .so as the macro <T in upper
# case>_SO, e.g. SPARE_CPU_SO. It links schedplug::testing, the SDK plus
# the host's rules the kit runs plugins by. The kit's C functions are
# linked in (compiled once per build tree, as the object library
# schedplug_testing_c_api), so C tests work too; the project must enable
# CXX, and the kit needs nlohmann/json 3 like the C++ layer.
function(schedplug_add_plugin_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "PLUGINS")
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "schedplug_add_plugin_test(${name}): no source files; "
      "write schedplug_add_plugin_test(${name} my_test.cpp PLUGINS my_plugin)")
  endif()
  if(NOT TARGET schedplug::testing)
    message(FATAL_ERROR
      "schedplug_add_plugin_test(${name}): target schedplug::testing is "
      "missing; call find_package(schedplug REQUIRED) first")
  endif()
  if(NOT TARGET nlohmann_json::nlohmann_json)
    message(FATAL_ERROR
      "schedplug_add_plugin_test(${name}): the test kit needs nlohmann/json 3 "
      "(Debian/Ubuntu: apt-get install nlohmann-json3-dev), which was not "
      "found; install it, then configure again.")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CXX" IN_LIST languages)
    message(FATAL_ERROR
      "schedplug_add_plugin_test(${name}): the test kit is compiled as C++; "
      "add CXX to your project()'s LANGUAGES")
  endif()
  # The kit's C functions (schedplug/testing.h) are compiled once per build
  # tree and linked into every test: the same file compiled per test took as
  # long as the test itself.
  if(NOT TARGET schedplug_testing_c_api)
    set(c_api ${CMAKE_BINARY_DIR}/schedplug_testing_c_api.cpp)
    file(CONFIGURE OUTPUT ${c_api} CONTENT
         "// The test kit's C functions (schedplug/testing.h).\n#define SCHEDPLUG_TESTING_DEFINE_C_API\n#include <schedplug/testing.hpp>\n")
    add_library(schedplug_testing_c_api OBJECT ${c_api})
    target_link_libraries(schedplug_testing_c_api PUBLIC schedplug::testing ${CMAKE_DL_LIBS})
    _schedplug_test_kit_standards(schedplug_testing_c_api)
  endif()
  add_executable(${name} ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE schedplug_testing_c_api)
  _schedplug_test_kit_standards(${name})
  foreach(plugin ${arg_PLUGINS})
    string(TOUPPER ${plugin} macro)
    string(MAKE_C_IDENTIFIER ${macro} macro)
    target_compile_definitions(${name} PRIVATE "${macro}_SO=\"$<TARGET_FILE:${plugin}>\"")
    add_dependencies(${name} ${plugin})
  endforeach()
  cmake_language(DEFER CALL enable_testing)
  add_test(NAME ${name} COMMAND ${name})
endfunction()
