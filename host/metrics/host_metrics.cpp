// HostMetrics (host_metrics.hpp): every family the host exposes is registered
// in the constructor with its help text and buckets, and updated by one small
// method each. One file: the families read as one list, the list /metrics
// shows.
#include "host/metrics/host_metrics.hpp"

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include <prometheus/collectable.h>
#include <prometheus/text_serializer.h>

#include "host/reload/plugin_generation.hpp"
#include "host/shadow/candidates.hpp"

namespace schedplug::host {
namespace {

// 10 us .. 10 s: RPCs over thousands of nodes take well under a
// millisecond; stuck ones take seconds. Written out, not computed: a bound
// computed as 1e-6 * 10 prints as le="9.999999999999999e-06".
const prometheus::Histogram::BucketBoundaries& duration_buckets() {
  static const prometheus::Histogram::BucketBoundaries buckets{
      1e-5,   2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2,
      2.5e-2, 5e-2,   0.1,  0.25, 0.5,    1,    2.5,  5,      10};
  return buckets;
}

// 1 us .. 10 s in steps of 1, 2.5, 5 per decade: a hook on a few nodes
// takes microseconds, a pass over thousands of nodes well under a
// millisecond, a refresh or a hung hook seconds.
const prometheus::Histogram::BucketBoundaries& hook_buckets() {
  static const prometheus::Histogram::BucketBoundaries buckets{
      1e-6, 2.5e-6, 5e-6,   1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4,
      5e-4, 1e-3,   2.5e-3, 5e-3, 1e-2,   2.5e-2, 5e-2, 0.1,
      0.25, 0.5,    1,      2.5,  5,      10};
  return buckets;
}

prometheus::MetricFamily gauge(const char* name, const char* help,
                               double value) {
  prometheus::ClientMetric metric;
  metric.gauge.value = value;
  return {name, help, prometheus::MetricType::Gauge, {metric}};
}

// Read at scrape time: cheap enough for a scrape (mallinfo2 visits each
// malloc arena once), and always current.
class MemoryCollectable : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    long pages = 0;
    {
      std::ifstream statm("/proc/self/statm");
      long size = 0;
      statm >> size >> pages;
    }
    const struct mallinfo2 m = mallinfo2();
    return {
        gauge("process_resident_memory_bytes", "Resident memory size.",
              static_cast<double>(pages) *
                  static_cast<double>(sysconf(_SC_PAGESIZE))),
        gauge("schedplug_heap_in_use_bytes",
              "Heap bytes in use (malloc'd and not freed), as mallinfo2 "
              "reports them (uordblks + hblkhd).",
              static_cast<double>(m.uordblks + m.hblkhd)),
        gauge("schedplug_heap_free_bytes",
              "Heap bytes freed but kept by malloc (mallinfo2 fordblks); "
              "RSS minus code and this is what the host really uses.",
              static_cast<double>(m.fordblks)),
    };
  }
};

}  // namespace

HostMetrics::HostMetrics(std::span<const PluginInstance* const> plugins)
    : registry_(std::make_shared<prometheus::Registry>()),
      memory_(std::make_shared<MemoryCollectable>()),
      plugin_calls_(prometheus::BuildCounter()
                        .Name("schedplug_plugin_calls_total")
                        .Help("Plugin hook calls (one per node evaluated), by "
                              "plugin and extension point.")
                        .Register(*registry_)),
      plugin_errors_(prometheus::BuildCounter()
                         .Name("schedplug_plugin_errors_total")
                         .Help("Plugin hook calls that returned ERROR (or a "
                               "score outside [0, 100] after normalizing).")
                         .Register(*registry_)),
      hook_duration_(prometheus::BuildHistogram()
                         .Name("schedplug_plugin_hook_duration_seconds")
                         .Help("Wall time of one plugin's hook in one RPC "
                               "(filter and score: the pass over all its "
                               "nodes), or of one refresh call, by plugin "
                               "and extension_point (filter, score, "
                               "normalize, begin_pod, refresh).")
                         .Register(*registry_)),
      rpc_duration_(prometheus::BuildHistogram()
                        .Name("schedplug_rpc_duration_seconds")
                        .Help("Host-side time of each RPC, by method.")
                        .Register(*registry_)),
      rpc_total_(prometheus::BuildCounter()
                     .Name("schedplug_rpc_total")
                     .Help("RPCs answered, by method and gRPC status code.")
                     .Register(*registry_)),
      node_table_nodes_(prometheus::BuildGauge()
                            .Name("schedplug_node_table_nodes")
                            .Help("Nodes in the node tables of all live "
                                  "sessions.")
                            .Register(*registry_)
                            .Add({})),
      resyncs_(prometheus::BuildCounter()
                   .Name("schedplug_resyncs_total")
                   .Help("Full node tables received (new session, host "
                         "restart, or a version mismatch).")
                   .Register(*registry_)
                   .Add({})),
      deadline_exceeded_(prometheus::BuildCounter()
                             .Name("schedplug_deadline_exceeded_total")
                             .Help("RPCs whose deadline ran out, by the plugin "
                                   "that was running.")
                             .Register(*registry_)),
      refresh_total_(prometheus::BuildCounter()
                         .Name("schedplug_refresh_total")
                         .Help("Background refresh calls, by plugin.")
                         .Register(*registry_)),
      refresh_failures_(prometheus::BuildCounter()
                            .Name("schedplug_refresh_failures_total")
                            .Help("Background refresh calls that failed, by "
                                  "plugin.")
                            .Register(*registry_)),
      refused_requests_(prometheus::BuildCounter()
                            .Name("schedplug_refused_requests_total")
                            .Help("Requests refused by a limit, or because "
                                  "the peer may only read, by reason "
                                  "(field_length, list_length, "
                                  "session_memory, total_session_memory, "
                                  "read_only).")
                            .Register(*registry_)),
      session_memory_(prometheus::BuildGauge()
                          .Name("schedplug_session_memory_bytes")
                          .Help("Memory all sessions hold (node tables and "
                                "current pods), estimated from their sizes; "
                                "what --max-total-session-memory bounds.")
                          .Register(*registry_)
                          .Add({})),
      handshake_refusals_(
          prometheus::BuildCounter()
              .Name("schedplug_handshake_refusals_total")
              .Help("Handshakes refused, by reason: protocol_version, "
                    "plugin_names, config_skew (the scheduler's and the "
                    "host's KubeSchedulerConfiguration differ).")
              .Register(*registry_)),
      recent_cycles_(prometheus::BuildGauge()
                         .Name("schedplug_recent_cycles")
                         .Help("Scheduling cycles the host holds for "
                               "`schedplug explain` (--explain-cycles).")
                         .Register(*registry_)
                         .Add({})),
      recent_cycle_bytes_(prometheus::BuildGauge()
                              .Name("schedplug_recent_cycles_bytes")
                              .Help("Memory those cycles hold, estimated; "
                                    "what --explain-memory bounds.")
                              .Register(*registry_)
                              .Add({})),
      recent_cycles_dropped_(
          prometheus::BuildCounter()
              .Name("schedplug_recent_cycles_dropped_total")
              .Help("Cycles dropped from Explain's recent cycles, by the "
                    "cap that dropped them (cycles: --explain-cycles, memory: "
                    "--explain-memory).")
              .Register(*registry_)),
      recent_cycles_dropped_count_(
          recent_cycles_dropped_.Add({{"cap", "cycles"}})),
      recent_cycles_dropped_memory_(
          recent_cycles_dropped_.Add({{"cap", "memory"}})),
      plugin_build_info_(
          prometheus::BuildGauge()
              .Name("schedplug_plugin_build_info")
              .Help("1 for each plugin file the host serves from, labelled "
                    "with the plugin's name, version, file and SHA-256 "
                    "(changes with each reload that swapped it).")
              .Register(*registry_)),
      plugin_set_generation_(
          prometheus::BuildGauge()
              .Name("schedplug_plugin_set_generation")
              .Help("1 at start-up, one more for each reload that swapped in "
                    "new plugin versions or configuration.")
              .Register(*registry_)
              .Add({})),
      reloads_(prometheus::BuildCounter()
                   .Name("schedplug_reloads_total")
                   .Help("Reloads that swapped in new plugin versions or "
                         "configuration without a restart.")
                   .Register(*registry_)
                   .Add({})),
      reloads_refused_(
          prometheus::BuildCounter()
              .Name("schedplug_reloads_refused_total")
              .Help("Changed plugin files or configurations the host did not "
                    "use (it kept what it had), by file and reason: load, "
                    "config, create, restart_needed.")
              .Register(*registry_)),
      shadow_build_info_(
          prometheus::BuildGauge()
              .Name("schedplug_shadow_build_info")
              .Help("1 for each shadow candidate (args.schedplug.shadow) the "
                    "host runs beside a live plugin, labelled with the live "
                    "plugin's name and the candidate's version, file "
                    "(relative to the plugin directory) and SHA-256.")
              .Register(*registry_)),
      shadow_pods_(prometheus::BuildCounter()
                       .Name("schedplug_shadow_pods_total")
                       .Help("Pods a shadow candidate (args.schedplug.shadow) "
                             "was compared on, by plugin and extension "
                             "point.")
                       .Register(*registry_)),
      shadow_pods_disagreeing_(
          prometheus::BuildCounter()
              .Name("schedplug_shadow_disagreements_total")
              .Help("Pods on which a shadow candidate disagreed with the live "
                    "plugin, by plugin and kind: verdicts (a node's Filter "
                    "verdict differs), rank (the score order of the nodes "
                    "differs), best_node (the highest-scored node differs), "
                    "error (the candidate failed).")
              .Register(*registry_)),
      shadow_verdicts_(prometheus::BuildCounter()
                           .Name("schedplug_shadow_differing_verdicts_total")
                           .Help("Node verdicts a shadow candidate's Filter "
                                 "gave otherwise than the live plugin's.")
                           .Register(*registry_)),
      shadow_dropped_(prometheus::BuildCounter()
                          .Name("schedplug_shadow_dropped_total")
                          .Help("Shadow runs dropped because the candidates' "
                                "queue was full (the live path never waits "
                                "for them).")
                          .Register(*registry_)
                          .Add({})),
      record_calls_(prometheus::BuildCounter()
                        .Name("schedplug_record_calls_total")
                        .Help("Calls written to the --record files.")
                        .Register(*registry_)
                        .Add({})),
      record_bytes_(prometheus::BuildCounter()
                        .Name("schedplug_record_bytes_total")
                        .Help("Compressed bytes written to the --record "
                              "files.")
                        .Register(*registry_)
                        .Add({})),
      record_dropped_(prometheus::BuildCounter()
                          .Name("schedplug_record_dropped_calls_total")
                          .Help("Calls left out of the --record files because "
                                "the writer fell behind, did not fit under "
                                "--record-max-size, or was paused by a write "
                                "error (their node-table changes are kept).")
                          .Register(*registry_)
                          .Add({})),
      record_files_removed_(
          prometheus::BuildCounter()
              .Name("schedplug_record_files_removed_total")
              .Help("Oldest --record files removed to stay under "
                    "--record-max-size.")
              .Register(*registry_)
              .Add({})),
      record_write_errors_(
          prometheus::BuildCounter()
              .Name("schedplug_record_write_errors_total")
              .Help("--record files that could not be created or written (a "
                    "full disk); each pauses the recording for a while.")
              .Register(*registry_)
              .Add({})),
      scrape_duration_(prometheus::BuildHistogram()
                           .Name("schedplug_metrics_scrape_duration_seconds")
                           .Help("Time to answer one scrape of /metrics.")
                           .Register(*registry_)),
      scrape_seconds_(scrape_duration_.Add({}, duration_buckets())) {
  for (const PluginInstance* plugin : plugins) {
    created_.try_emplace(plugin->serial(), make_series(*plugin));
  }
  for (std::string_view method : kRpcMethods) {
    for (std::string_view code : kRpcCodes) rpc_series(method, code);
  }
  for (std::string_view reason : kRefusedRequestReasons) {
    refused_requests_.Add({{"reason", std::string(reason)}});
  }
  for (std::string_view reason : kHandshakeRefusalReasons) {
    handshake_refusals_.Add({{"reason", std::string(reason)}});
  }
}

void HostMetrics::reload_file_series(const std::string& file) {
  for (std::string_view reason : kReloadRefusalReasons) {
    reloads_refused_.Add({{"file", file}, {"reason", std::string(reason)}});
  }
}

void HostMetrics::config_file(const std::string& file) {
  reload_file_series(file);
}

HostMetrics::PluginSeries HostMetrics::make_series(
    const PluginInstance& plugin) {
  const PluginLibrary& library = plugin.library();
  const std::string& name = plugin.name();
  PluginSeries series;
  const auto extension_point = [&](size_t e, const char* label) {
    const prometheus::Labels labels{{"plugin", name},
                                    {"extension_point", label}};
    series.calls[e] = &plugin_calls_.Add(labels);
    series.errors[e] = &plugin_errors_.Add(labels);
  };
  // The label the counters name the extension point by, so the two join.
  const auto hook = [&](TimedHook h) {
    series.hooks[static_cast<size_t>(h)] = &hook_duration_.Add(
        {{"plugin", name}, {"extension_point", timed_hook_name(h)}},
        hook_buckets());
  };
  series.deadline_exceeded = &deadline_exceeded_.Add({{"plugin", name}});
  if (library.has_filter()) {
    extension_point(0, "filter");
    hook(TimedHook::kFilter);
  }
  if (library.has_score()) {
    extension_point(1, "score");
    hook(TimedHook::kScore);
    hook(TimedHook::kNormalize);
  }
  if (library.has_gate()) hook(TimedHook::kBeginPod);
  if (library.has_refresh()) {
    hook(TimedHook::kRefresh);
    series.refreshes = &refresh_total_.Add({{"plugin", name}});
    series.refresh_failures = &refresh_failures_.Add({{"plugin", name}});
  }
  return series;
}

HostMetrics::PluginSeries& HostMetrics::plugin_series(
    const PluginInstance& plugin) {
  if (auto it = created_.find(plugin.serial()); it != created_.end()) {
    return it->second;
  }
  // By name and build: another version of a plugin may have other hooks.
  const std::string key = plugin.name() + "/" + plugin.library().sha256();
  std::lock_guard lock(mutex_);
  auto it = late_.find(key);
  if (it == late_.end()) it = late_.emplace(key, make_series(plugin)).first;
  return it->second;
}

void HostMetrics::hooks_ran(const PluginRun& run) {
  if (run.plugin == nullptr) return;
  const PluginSeries& s = plugin_series(*run.plugin);
  for (size_t h = 0; h < kTimedHooks; ++h) {
    const auto hook = static_cast<TimedHook>(h);
    if (run.hooks.ran(hook) && s.hooks[h] != nullptr) {
      s.hooks[h]->Observe(
          std::chrono::duration<double>(run.hooks.took(hook)).count());
    }
  }
}

void HostMetrics::plugin_ran(const PluginRun& run,
                             std::string_view extension_point) {
  if (run.plugin == nullptr) return;
  hooks_ran(run);
  if (run.skipped) return;
  const PluginSeries& s = plugin_series(*run.plugin);
  const size_t e = extension_point == "score" ? 1 : 0;
  if (s.calls[e] == nullptr) return;
  s.calls[e]->Increment(static_cast<double>(run.calls));
  if (run.errors > 0) s.errors[e]->Increment(static_cast<double>(run.errors));
}

HostMetrics::RpcSeries& HostMetrics::rpc_series(std::string_view method,
                                                std::string_view code) {
  std::string key(method);
  key += '/';
  key += code;
  std::lock_guard lock(mutex_);
  auto it = rpc_series_.find(key);
  if (it != rpc_series_.end()) return it->second;
  RpcSeries series{
      &rpc_duration_.Add({{"method", std::string(method)}}, duration_buckets()),
      &rpc_total_.Add(
          {{"method", std::string(method)}, {"code", std::string(code)}})};
  return rpc_series_.emplace(std::move(key), series).first->second;
}

void HostMetrics::rpc_done(std::string_view method, std::string_view code,
                           double seconds) {
  RpcSeries& s = rpc_series(method, code);
  s.duration->Observe(seconds);
  s.total->Increment();
}

void HostMetrics::node_table_changed(int64_t added_nodes) {
  node_table_nodes_.Increment(static_cast<double>(added_nodes));
}

void HostMetrics::resync() { resyncs_.Increment(); }

void HostMetrics::deadline_exceeded(const std::string& plugin) {
  // Rare: the label map built by Add() costs nothing that matters here.
  deadline_exceeded_.Add({{"plugin", plugin}}).Increment();
}

void HostMetrics::refreshed(const PluginInstance& plugin, bool ok,
                            std::chrono::nanoseconds took) {
  const PluginSeries& s = plugin_series(plugin);
  if (s.refreshes == nullptr) return;
  s.hooks[static_cast<size_t>(TimedHook::kRefresh)]->Observe(
      std::chrono::duration<double>(took).count());
  s.refreshes->Increment();
  if (!ok) s.refresh_failures->Increment();
}

void HostMetrics::plugins_loaded(const PluginGeneration& set) {
  // The series of instances a reload created (their plugin or version may
  // be new); the lookup creates them at once.
  for (const CreatedPlugins::Created& c : set.created->instances()) {
    if (!c.shadow) plugin_series(*c.instance);
  }
  std::lock_guard lock(mutex_);
  for (prometheus::Gauge* g : build_info_) plugin_build_info_.Remove(g);
  build_info_.clear();
  for (prometheus::Gauge* g : shadow_info_) shadow_build_info_.Remove(g);
  shadow_info_.clear();
  for (const auto& lib : set.libraries) {
    const std::string file = lib->file().filename().string();
    prometheus::Gauge& g = plugin_build_info_.Add({{"plugin", lib->name()},
                                                   {"version", lib->version()},
                                                   {"file", file},
                                                   {"sha256", lib->sha256()}});
    g.Set(1);
    build_info_.push_back(&g);
    reload_file_series(file);
  }
  for (const ShadowBuild& b : shadow_builds(set.resolved)) {
    prometheus::Gauge& g = shadow_build_info_.Add({{"plugin", b.plugin},
                                                   {"version", b.version},
                                                   {"file", b.file},
                                                   {"sha256", b.sha256}});
    g.Set(1);
    shadow_info_.push_back(&g);
    // What the candidate is compared on, at zero until it is.
    for (const auto& lib : set.libraries) {
      if (lib->name() != b.plugin) continue;
      if (lib->has_filter()) {
        shadow_pods_.Add({{"plugin", b.plugin}, {"extension_point", "filter"}});
        shadow_verdicts_.Add({{"plugin", b.plugin}});
      }
      if (lib->has_score()) {
        shadow_pods_.Add({{"plugin", b.plugin}, {"extension_point", "score"}});
      }
    }
    for (std::string_view kind : kShadowDisagreementKinds) {
      shadow_pods_disagreeing_.Add(
          {{"plugin", b.plugin}, {"kind", std::string(kind)}});
    }
  }
  plugin_set_generation_.Set(static_cast<double>(set.generation));
  if (set.generation > 1) reloads_.Increment();
}

void HostMetrics::reload_refused(const std::string& file,
                                 std::string_view reason) {
  reloads_refused_.Add({{"file", file}, {"reason", std::string(reason)}})
      .Increment();
}

void HostMetrics::shadow_compared(const std::string& plugin,
                                  std::string_view extension_point) {
  shadow_pods_
      .Add({{"plugin", plugin},
            {"extension_point", std::string(extension_point)}})
      .Increment();
}

void HostMetrics::shadow_disagreed(const std::string& plugin,
                                   std::string_view kind, size_t count) {
  shadow_pods_disagreeing_
      .Add({{"plugin", plugin}, {"kind", std::string(kind)}})
      .Increment();
  if (kind == "verdicts") {
    shadow_verdicts_.Add({{"plugin", plugin}})
        .Increment(static_cast<double>(count));
  }
}

void HostMetrics::shadow_dropped() { shadow_dropped_.Increment(); }

void HostMetrics::record_written(size_t calls, size_t bytes) {
  record_calls_.Increment(static_cast<double>(calls));
  record_bytes_.Increment(static_cast<double>(bytes));
}

void HostMetrics::record_dropped(size_t calls) {
  record_dropped_.Increment(static_cast<double>(calls));
}

void HostMetrics::record_file_removed() { record_files_removed_.Increment(); }

void HostMetrics::record_write_error() { record_write_errors_.Increment(); }

void HostMetrics::request_refused(std::string_view reason) {
  refused_requests_.Add({{"reason", std::string(reason)}}).Increment();
}

void HostMetrics::recent_cycles(size_t cycles, size_t bytes,
                                uint64_t dropped_count,
                                uint64_t dropped_memory) {
  recent_cycles_.Set(static_cast<double>(cycles));
  recent_cycle_bytes_.Set(static_cast<double>(bytes));
  // Counters only go up: add what the store dropped since the last call.
  const auto catch_up = [](prometheus::Counter& c, uint64_t total) {
    const double have = c.Value();
    const auto want = static_cast<double>(total);
    if (want > have) c.Increment(want - have);
  };
  catch_up(recent_cycles_dropped_count_, dropped_count);
  catch_up(recent_cycles_dropped_memory_, dropped_memory);
}

void HostMetrics::session_memory(size_t bytes) {
  session_memory_.Set(static_cast<double>(bytes));
}

void HostMetrics::handshake_refused(std::string_view reason) {
  handshake_refusals_.Add({{"reason", std::string(reason)}}).Increment();
}

std::string HostMetrics::text() const {
  auto families = registry_->Collect();
  for (auto& f : memory_->Collect()) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

std::string HostMetrics::scrape() {
  const auto start = std::chrono::steady_clock::now();
  std::string out = text();
  scrape_seconds_.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return out;
}

}  // namespace schedplug::host
