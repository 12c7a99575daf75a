# schedplug_host_core: everything of the host that needs no network —
# pod/node models, config parsing and profile resolution, the plugin loader,
# the name checks, the created plugins (plugin/). Linked by schedplug-host, the
# schedplug CLI and plugin tests.

find_package(Boost 1.74 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(OpenSSL REQUIRED)  # SHA-256 of plugin files
find_package(fmt REQUIRED)

add_library(schedplug_host_core STATIC
  ${CMAKE_CURRENT_LIST_DIR}/model/models.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loader/plugin_library.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loader/elf_image.cpp
  ${CMAKE_CURRENT_LIST_DIR}/loader/plugin_file_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plugin/plugin_instance.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plugin/waiting_pods.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plugin/args_services.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plugin/hook_watchdog.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plugin/created_plugins.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shadow/candidates.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config/scheduler_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config/yaml_bounds.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config/resolve.cpp
  ${CMAKE_CURRENT_LIST_DIR}/check/suggest.cpp
  ${CMAKE_CURRENT_LIST_DIR}/check/in_tree_plugins.cpp
  ${CMAKE_CURRENT_LIST_DIR}/check/name_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/check/create_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/check/startup_check.cpp
)
target_include_directories(schedplug_host_core PUBLIC
  ${CMAKE_CURRENT_LIST_DIR}/..
  ${CMAKE_CURRENT_LIST_DIR}/../sdk/include
)
# Boost.DLL with std::filesystem paths (no Boost.Filesystem library).
target_compile_definitions(schedplug_host_core PUBLIC BOOST_DLL_USE_STD_FS)
target_link_libraries(schedplug_host_core
  PUBLIC schedplug::rules Boost::headers spdlog::spdlog nlohmann_json::nlohmann_json
  PRIVATE yaml-cpp OpenSSL::Crypto fmt::fmt ${CMAKE_DL_LIBS}
)
set_target_properties(schedplug_host_core PROPERTIES POSITION_INDEPENDENT_CODE ON)
schedplug_warnings(schedplug_host_core)
# std::regex: GCC's false maybe-uninitialized under sanitizers (cmake/).
schedplug_sanitizer_regex_workaround(
  ${CMAKE_CURRENT_LIST_DIR}/config/scheduler_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config/yaml_bounds.cpp
  ${CMAKE_CURRENT_LIST_DIR}/config/resolve.cpp)

if(SCHEDPLUG_BUILD_TESTS)
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/tests/core
                   ${CMAKE_CURRENT_BINARY_DIR}/tests/core)
endif()
