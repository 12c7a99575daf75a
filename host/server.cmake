# schedplug-host: the call pipeline and its transports, sessions, metrics,
# security, background refresh and the app (see host/README.md). Built on
# schedplug_host_engine and the generated schedplug_proto; skipped (configure
# still succeeds) until both exist.
if(NOT TARGET schedplug_host_engine OR NOT TARGET schedplug_proto)
  message(STATUS "schedplug-host: skipped (needs schedplug_host_engine and schedplug_proto)")
  return()
endif()

find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(prometheus-cpp REQUIRED COMPONENTS core)
find_package(civetweb CONFIG REQUIRED)  # /metrics (metrics/metrics_endpoint)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)

# Everything but main(), so tests and benchmarks run the real server.
add_library(schedplug_host_server STATIC
  ${CMAKE_CURRENT_LIST_DIR}/metrics/host_metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/metrics/metrics_endpoint.cpp
  ${CMAKE_CURRENT_LIST_DIR}/refresh/refresh_scheduler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/convert/convert.cpp
  ${CMAKE_CURRENT_LIST_DIR}/identity/host_identity.cpp
  ${CMAKE_CURRENT_LIST_DIR}/identity/config_skew.cpp
  ${CMAKE_CURRENT_LIST_DIR}/identity/handshake_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/session/sessions.cpp
  ${CMAKE_CURRENT_LIST_DIR}/session/session_watch.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipeline/node_window.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipeline/call_pipeline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipeline/handshake.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipeline/filter_calls.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipeline/score_call.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipeline/hook_calls.cpp
  ${CMAKE_CURRENT_LIST_DIR}/observers/metrics_observer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/observers/record_observer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/observers/explain_observer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/observers/shadow_observer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transport/grpc/host_service.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transport/grpc/explain_status.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transport/fastpath/fast_path_server.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shadow/shadow_runner.cpp
  ${CMAKE_CURRENT_LIST_DIR}/record/record_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/record/table_mirror.cpp
  ${CMAKE_CURRENT_LIST_DIR}/record/cycle_recorder.cpp
  ${CMAKE_CURRENT_LIST_DIR}/record/replay_compare.cpp
  ${CMAKE_CURRENT_LIST_DIR}/record/replayer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/explain/recent_cycles.cpp
  ${CMAKE_CURRENT_LIST_DIR}/explain/cycle_parts.cpp
  ${CMAKE_CURRENT_LIST_DIR}/security/listen_address.cpp
  ${CMAKE_CURRENT_LIST_DIR}/security/unix_listener.cpp
  ${CMAKE_CURRENT_LIST_DIR}/security/peer_identity.cpp
  ${CMAKE_CURRENT_LIST_DIR}/security/tcp_credentials.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reload/plugin_generation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reload/plugin_reload.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reload/reload_status.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reload/change_watch.cpp
  ${CMAKE_CURRENT_LIST_DIR}/app/host_app.cpp
)
target_link_libraries(schedplug_host_server
  PUBLIC schedplug_host_engine schedplug_proto prometheus-cpp::core
         spdlog::spdlog fmt::fmt Threads::Threads
  PRIVATE civetweb::civetweb-cpp
)
schedplug_warnings(schedplug_host_server)


add_executable(schedplug-host ${CMAKE_CURRENT_LIST_DIR}/app/main.cpp)
target_link_libraries(schedplug-host PRIVATE schedplug_host_server CLI11::CLI11)
schedplug_warnings(schedplug-host)
install(TARGETS schedplug-host RUNTIME DESTINATION bin COMPONENT runtime)

if(SCHEDPLUG_BUILD_TESTS)
  # host/README.md's flag table is what --help says.
  add_test(NAME host_flags_match_readme
    COMMAND ${CMAKE_COMMAND} -DHOST=$<TARGET_FILE:schedplug-host>
            -DREADME=${CMAKE_CURRENT_LIST_DIR}/README.md
            -P ${PROJECT_SOURCE_DIR}/cmake/host_flags_test.cmake)
  set_tests_properties(host_flags_match_readme PROPERTIES LABELS docs)
endif()

if(SCHEDPLUG_BUILD_TESTS AND EXISTS ${CMAKE_CURRENT_LIST_DIR}/tests/server/CMakeLists.txt)
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/tests/server
                   ${CMAKE_CURRENT_BINARY_DIR}/tests/server)
endif()
if(SCHEDPLUG_BUILD_BENCHMARKS AND EXISTS ${CMAKE_CURRENT_LIST_DIR}/bench/CMakeLists.txt)
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/bench
                   ${CMAKE_CURRENT_BINARY_DIR}/bench)
endif()
