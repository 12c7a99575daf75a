# schedplug_host_engine: what evaluates plugins on nodes, without gRPC or
# metrics — the node table (table/) and the Filter and Score chains with
# their thread pool (chain/), on schedplug_host_core's created plugins.
# Linked by the server and by `schedplug simulate`.
if(NOT TARGET schedplug_host_core)
  return()
endif()

find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(Threads REQUIRED)

add_library(schedplug_host_engine STATIC
  ${CMAKE_CURRENT_LIST_DIR}/table/compact_node.cpp
  ${CMAKE_CURRENT_LIST_DIR}/table/string_pool.cpp
  ${CMAKE_CURRENT_LIST_DIR}/table/node_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/chain/thread_pool.cpp
  ${CMAKE_CURRENT_LIST_DIR}/chain/chain_types.cpp
  ${CMAKE_CURRENT_LIST_DIR}/chain/filter_chain.cpp
  ${CMAKE_CURRENT_LIST_DIR}/chain/score_chain.cpp
  ${CMAKE_CURRENT_LIST_DIR}/chain/pod_cycle.cpp
)
target_link_libraries(schedplug_host_engine
  PUBLIC schedplug_host_core spdlog::spdlog fmt::fmt Threads::Threads)
set_target_properties(schedplug_host_engine PROPERTIES POSITION_INDEPENDENT_CODE ON)
schedplug_warnings(schedplug_host_engine)
