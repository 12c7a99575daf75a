// The host's Prometheus metrics (text format, scraped from
// --metrics-listen). Updated once per plugin per hook per RPC, never per
// node, so the hot loops stay free of atomics and clock reads.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "host/chain/chain_types.hpp"

namespace schedplug::host {

struct PluginGeneration;

class HostMetrics {
 public:
  // The label values whose series exist, at zero, from start-up (an alert
  // on a counter that does not exist yet sees no data, not a zero). The
  // per-plugin series exist for every plugin created, the per-file ones of
  // schedplug_reloads_refused_total for every file served.
  static constexpr std::array<std::string_view, 8> kRpcMethods{
      "Handshake", "PreFilter",    "FilterNodes", "Filter",
      "PreScore",  "RestoreTable", "Explain",     "Status"};
  // code_name()'s values (host/pipeline/call_observer.hpp).
  static constexpr std::array<std::string_view, 7> kRpcCodes{
      "OK",
      "INVALID_ARGUMENT",
      "FAILED_PRECONDITION",
      "DEADLINE_EXCEEDED",
      "RESOURCE_EXHAUSTED",
      "INTERNAL",
      "OTHER"};
  static constexpr std::array<std::string_view, 5> kRefusedRequestReasons{
      "field_length", "list_length", "session_memory", "total_session_memory",
      "read_only"};
  static constexpr std::array<std::string_view, 3> kHandshakeRefusalReasons{
      "protocol_version", "plugin_names", "config_skew"};
  static constexpr std::array<std::string_view, 4> kReloadRefusalReasons{
      "load", "config", "create", "restart_needed"};
  static constexpr std::array<std::string_view, 5> kShadowDisagreementKinds{
      "verdicts", "rank", "best_node", "error", "hung"};

  // `plugins`: the instances the host created; their series exist from
  // the start, and the request path finds them without a lock.
  explicit HostMetrics(std::span<const PluginInstance* const> plugins = {});

  const std::shared_ptr<prometheus::Registry>& registry() const {
    return registry_;
  }
  // The process's memory, read at each scrape: resident set size, and the
  // heap as malloc sees it (in use, and free but kept by malloc).
  const std::shared_ptr<prometheus::Collectable>& memory() const {
    return memory_;
  }

  // One chain run of a plugin at an extension point ("filter", "score"):
  // its hook calls and errors, and the time of each hook it called.
  void plugin_ran(const PluginRun& run, std::string_view extension_point);
  // Only the time of each hook the run called (a PreFilter's begin_pod).
  void hooks_ran(const PluginRun& run);
  // One RPC; `code` is the gRPC status code name ("OK", "INVALID_ARGUMENT").
  void rpc_done(std::string_view method, std::string_view code, double seconds);
  void node_table_changed(int64_t added_nodes);
  void resync();
  // `plugin` is the plugin that was running ("" when none was).
  void deadline_exceeded(const std::string& plugin);
  // One background refresh call and how long it took.
  void refreshed(const PluginInstance& plugin, bool ok,
                 std::chrono::nanoseconds took);
  // A request refused by a limit (docs/security.md): "field_length",
  // "list_length", "session_memory", "total_session_memory".
  void request_refused(std::string_view reason);
  // The bytes all sessions hold, as the sessions account them.
  void session_memory(size_t bytes);
  // A refused Handshake: "protocol_version", "plugin_names" or
  // "config_skew" (docs/protocol.md).
  void handshake_refused(std::string_view reason);
  // What the recent cycles (`schedplug explain`) hold, and the
  // cycles each cap dropped since start.
  void recent_cycles(size_t cycles, size_t bytes, uint64_t dropped_count,
                     uint64_t dropped_memory);

  // The plugin set now serving (start-up or a reload that swapped it in):
  // one schedplug_plugin_build_info series per plugin file and one
  // schedplug_shadow_build_info series per shadow candidate, the set's
  // generation, and a swap counted (not at start-up, generation 1). The
  // per-plugin, per-file and per-candidate counters of the set exist from
  // then on.
  void plugins_loaded(const PluginGeneration& set);
  // The configuration file's name, as reload_refused() gets it: its
  // schedplug_reloads_refused_total series exist from now on.
  void config_file(const std::string& file);
  // A change the reload did not use: `file` is the plugin file (or the
  // configuration file) and `reason` one of "load", "config", "create",
  // "restart_needed" (docs/hot-reload.md).
  void reload_refused(const std::string& file, std::string_view reason);

  // Shadow mode (host/shadow/): one pod compared for `plugin` at
  // `extension_point` ("filter", "score"); `count` disagreements of `kind`
  // ("verdicts": nodes whose verdicts differ; "rank", "best_node": pods;
  // "error": candidate failures); a job dropped because the queue was full.
  void shadow_compared(const std::string& plugin,
                       std::string_view extension_point);
  void shadow_disagreed(const std::string& plugin, std::string_view kind,
                        size_t count);
  void shadow_dropped();

  // Recording (--record, host/record/): calls written, compressed bytes
  // written, calls left out (the writer fell behind, no room, or paused;
  // their node-table changes are kept), files removed to stay under the
  // size cap, and files that could not be created or written.
  void record_written(size_t calls, size_t bytes);
  void record_dropped(size_t calls);
  void record_file_removed();
  void record_write_error();

  // Everything in Prometheus text format (what a scrape returns).
  std::string text() const;
  // text() for an HTTP scrape, whose own time it observes in
  // schedplug_metrics_scrape_duration_seconds.
  std::string scrape();

 private:
  // One plugin's series, for the hooks its library has (nullptr for the
  // others). calls and errors by extension point: [0] filter, [1] score.
  struct PluginSeries {
    std::array<prometheus::Counter*, 2> calls{};
    std::array<prometheus::Counter*, 2> errors{};
    std::array<prometheus::Histogram*, kTimedHooks> hooks{};
    prometheus::Counter* refreshes = nullptr;
    prometheus::Counter* refresh_failures = nullptr;
    prometheus::Counter* deadline_exceeded = nullptr;
  };
  // A file's schedplug_reloads_refused_total series, one per reason.
  void reload_file_series(const std::string& file);
  PluginSeries make_series(const PluginInstance& plugin);
  PluginSeries& plugin_series(const PluginInstance& plugin);
  struct RpcSeries {
    prometheus::Histogram* duration;
    prometheus::Counter* total;
  };
  RpcSeries& rpc_series(std::string_view method, std::string_view code);

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<prometheus::Collectable> memory_;
  prometheus::Family<prometheus::Counter>& plugin_calls_;
  prometheus::Family<prometheus::Counter>& plugin_errors_;
  prometheus::Family<prometheus::Histogram>& hook_duration_;
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
  prometheus::Gauge& recent_cycles_;
  prometheus::Gauge& recent_cycle_bytes_;
  prometheus::Family<prometheus::Counter>& recent_cycles_dropped_;
  prometheus::Counter& recent_cycles_dropped_count_;
  prometheus::Counter& recent_cycles_dropped_memory_;
  prometheus::Family<prometheus::Gauge>& plugin_build_info_;
  prometheus::Gauge& plugin_set_generation_;
  prometheus::Counter& reloads_;
  prometheus::Family<prometheus::Counter>& reloads_refused_;
  std::vector<prometheus::Gauge*> build_info_;  // the serving set's; mutex_
  prometheus::Family<prometheus::Gauge>& shadow_build_info_;
  std::vector<prometheus::Gauge*> shadow_info_;  // the serving set's; mutex_
  prometheus::Family<prometheus::Counter>& shadow_pods_;
  prometheus::Family<prometheus::Counter>& shadow_pods_disagreeing_;
  prometheus::Family<prometheus::Counter>& shadow_verdicts_;
  prometheus::Counter& shadow_dropped_;
  prometheus::Counter& record_calls_;
  prometheus::Counter& record_bytes_;
  prometheus::Counter& record_dropped_;
  prometheus::Counter& record_files_removed_;
  prometheus::Counter& record_write_errors_;
  prometheus::Family<prometheus::Histogram>& scrape_duration_;
  prometheus::Histogram& scrape_seconds_;

  // Series looked up once: a Family's Add builds and hashes a label map,
  // which every call paid (a few percent of the host's CPU per PreFilter).
  // created_ is fixed by the constructor (read without the lock); an
  // instance it lacks gets its series in late_ (reloads, tests,
  // benchmarks). Keyed by serial, not address: a reload frees instances,
  // and a new one at a freed address must not be credited to the old.
  std::unordered_map<uint64_t, PluginSeries> created_;
  std::mutex mutex_;  // guards late_ and rpc_series_
  std::unordered_map<std::string, PluginSeries> late_;
  std::unordered_map<std::string, RpcSeries> rpc_series_;
};

}  // namespace schedplug::host
