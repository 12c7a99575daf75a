#include <chrono>

#include "host/observers/observers.hpp"

namespace schedplug::host {

void MetricsObserver::session_closed(const Session&,
                                     const Session::Released& released) {
  metrics_.node_table_changed(-released.nodes);
  metrics_.session_memory(sessions_.total_memory());
}

void MetricsObserver::table_changed(const Session&, const TableDelta& delta,
                                    const AppliedDelta& applied) {
  metrics_.session_memory(sessions_.total_memory());
  metrics_.node_table_changed(applied.nodes_added);
  if (delta.full) metrics_.resync();
}

void MetricsObserver::refused(std::string_view reason) {
  metrics_.request_refused(reason);
}

void MetricsObserver::handshake_refused(std::string_view reason) {
  metrics_.handshake_refused(reason);
}

void MetricsObserver::cycle_began(const PodCycle& cycle) {
  for (const PluginRun& run : cycle.begin_runs()) metrics_.hooks_ran(run);
}

void MetricsObserver::chain_ran(const ChainRuns& runs,
                                std::string_view extension_point) {
  for (const PluginRun& run : runs) metrics_.plugin_ran(run, extension_point);
}

void MetricsObserver::plugin_unfinished(const std::string& plugin) {
  metrics_.deadline_exceeded(plugin);
}

void MetricsObserver::call_ended(const CallEnded& call) {
  metrics_.rpc_done(call.method, code_name(call.status->error_code()),
                    std::chrono::duration<double>(call.took).count());
}

}  // namespace schedplug::host
