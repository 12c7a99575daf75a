// The host's Prometheus metrics (text format, scraped from
// --metrics-listen). Updated once per plugin per RPC, never per node, so
// the hot loops stay free of atomics.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "host/chain/chain_types.hpp"

namespace schedplug::host {

class HostMetrics {
 public:
  HostMetrics();

  const std::shared_ptr<prometheus::Registry>& registry() const {
    return registry_;
  }
  // The process's memory, read at each scrape: resident set size, and the
  // heap as malloc sees it (in use, and free but kept by malloc).
  const std::shared_ptr<prometheus::Collectable>& memory() const {
    return memory_;
  }

  // One chain run of a plugin at an extension point ("filter", "score").
  void plugin_ran(const PluginRun& run, std::string_view extension_point);
  // One RPC; `code` is the gRPC status code name ("OK", "INVALID_ARGUMENT").
  void rpc_done(std::string_view method, std::string_view code, double seconds);
  void node_table_changed(int64_t added_nodes);
  void resync();
  // `plugin` is the plugin that was running ("" when none was).
  void deadline_exceeded(const std::string& plugin);
  void refresh_failed(const std::string& plugin);
  void refresh_succeeded(const std::string& plugin);
  // A request refused by a limit (docs/security.md): "field_length",
  // "list_length", "session_memory", "total_session_memory".
  void request_refused(std::string_view reason);
  // The bytes all sessions hold, as the sessions account them.
  void session_memory(size_t bytes);
  // A refused Handshake: "protocol_version", "plugin_names" or
  // "config_skew" (docs/protocol.md).
  void handshake_refused(std::string_view reason);

  // Everything in Prometheus text format (what a scrape returns).
  std::string text() const;

 private:
  struct PluginSeries {
    prometheus::Counter* calls;
    prometheus::Counter* errors;
    prometheus::Histogram* duration;
  };
  PluginSeries& plugin_series(const std::string& plugin,
                              std::string_view extension_point);
  struct RpcSeries {
    prometheus::Histogram* duration;
    prometheus::Counter* total;
  };
  RpcSeries& rpc_series(std::string_view method, std::string_view code);

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<prometheus::Collectable> memory_;
  prometheus::Family<prometheus::Counter>& plugin_calls_;
  prometheus::Family<prometheus::Counter>& plugin_errors_;
  prometheus::Family<prometheus::Histogram>& plugin_duration_;
  prometheus::Family<prometheus::Histogram>& rpc_duration_;
  prometheus::Family<prometheus::Counter>& rpc_total_;
  prometheus::Gauge& node_table_nodes_;
  prometheus::Counter& resyncs_;
  prometheus::Family<prometheus::Counter>& deadline_exceeded_;
  prometheus::Family<prometheus::Counter>& refresh_total_;
  prometheus::Family<prometheus::Counter>& refresh_failures_;
  prometheus::Family<prometheus::Counter>& refused_requests_;
  prometheus::Gauge& session_memory_;
  prometheus::Family<prometheus::Counter>& handshake_refusals_;

  // Series looked up once: a Family's Add builds and hashes a label map,
  // which every call paid (a few percent of the host's CPU per PreFilter).
  std::mutex mutex_;  // guards series_ and rpc_series_
  std::unordered_map<std::string, PluginSeries> series_;
  std::unordered_map<std::string, RpcSeries> rpc_series_;
};

}  // namespace schedplug::host
