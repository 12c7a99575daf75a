# The target schedplug_artifacts: what the project ships and what its Go
# and deploy tests run (the host, the CLI, every plugin .so, the test
# suites' plugins and plugin directories), without the test programs (but
# the one that needs glibc's allocator) and benchmarks. tools/dev/test.sh builds it in build/ and runs the C++ test
# programs in the sanitizer tree only (docs/sanitizers.md): compiling them
# twice cost more than any test step.

# The executables it builds: the host and the CLI, the loader the
# out-of-tree SDK test runs (a build-system test, run in build/), and the
# one test program that needs glibc's allocator (run in build/ too).
set(_schedplug_artifact_executables schedplug-host schedplug plugin_smoke
    schedplug_host_allocator_tests)

function(_schedplug_collect_artifacts dir out)
  set(found)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    get_target_property(excluded ${target} EXCLUDE_FROM_ALL)
    if(excluded)
      continue()
    endif()
    if(type STREQUAL "MODULE_LIBRARY" OR type STREQUAL "SHARED_LIBRARY" OR type STREQUAL "UTILITY"
       OR (type STREQUAL "EXECUTABLE" AND target IN_LIST _schedplug_artifact_executables))
      list(APPEND found ${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _schedplug_collect_artifacts(${sub} sub_found)
    list(APPEND found ${sub_found})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Deferred to the end of the top-level directory, after the targets that
# other deferred calls add (plugin_smoke: sdk/tests/CMakeLists.txt).
function(_schedplug_add_artifacts_target)
  _schedplug_collect_artifacts(${PROJECT_SOURCE_DIR} artifacts)
  add_custom_target(schedplug_artifacts)
  add_dependencies(schedplug_artifacts ${artifacts})
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _schedplug_add_artifacts_target)
