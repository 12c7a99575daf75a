// What the filter and score chains report besides their answers: per
// plugin timing (for metrics and slow-call logs), and the plugins that did
// not finish before their deadline.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "host/chain/deadline.hpp"
#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {

class PodCycle;

// The hooks the host times for schedplug_plugin_hook_duration_seconds:
// filter and score (one pass over the call's nodes), normalize
// (normalize_score, or the declared policy), begin_pod (the per-pod gate:
// pod_begin, or applies for a plugin without it) and refresh.
enum class TimedHook : uint8_t {
  kFilter,
  kScore,
  kNormalize,
  kBeginPod,
  kRefresh
};
inline constexpr size_t kTimedHooks = 5;
// The hook histogram's `extension_point` label (the counters' label for
// filter and score): "filter", "score", "normalize", "begin_pod",
// "refresh".
const char* timed_hook_name(TimedHook hook);

// The wall time of each hook one run called (a pass counts once, however
// many nodes and threads it took).
class HookTimes {
 public:
  void add(TimedHook hook, std::chrono::nanoseconds took) {
    const auto i = static_cast<size_t>(hook);
    took_[i] += took;
    ran_ |= static_cast<uint8_t>(1u << i);
  }
  bool ran(TimedHook hook) const {
    return (ran_ >> static_cast<size_t>(hook)) & 1u;
  }
  std::chrono::nanoseconds took(TimedHook hook) const {
    return took_[static_cast<size_t>(hook)];
  }

 private:
  std::array<std::chrono::nanoseconds, kTimedHooks> took_{};
  uint8_t ran_ = 0;
};

// One plugin's share of one chain run.
struct PluginRun {
  const PluginInstance* plugin = nullptr;
  std::chrono::nanoseconds duration{0};  // all of it, gate included
  HookTimes hooks;
  uint64_t calls = 0;    // hook calls (nodes evaluated)
  uint64_t errors = 0;   // ERROR verdicts
  bool skipped = false;  // its gate (pod_begin or applies) said no
};

using ChainRuns = std::vector<PluginRun>;

// A plugin that did not finish before its deadline: its verdicts (or
// scores) are incomplete, and the shim applies the plugin's failurePolicy.
struct UnfinishedPlugin {
  uint32_t plugin = 0;  // index into the chain's plugin list
  const PluginInstance* instance = nullptr;
  // One sentence naming the plugin and the cause, e.g.
  //   plugin "SleepyFilter" did not finish filter within 80.0 ms (104 of
  //   200 nodes done)
  std::string reason;
};

// What bounds a chain run besides the call's deadline.
struct ChainLimits {
  // Per plugin (parallel to the chain's plugin list): when that plugin
  // must stop. Empty: the call's deadline for every plugin.
  std::span<const Deadline> plugin_deadlines;
  // Per plugin: the cycle's applies() answer (1: applies, 0: does not),
  // when the shim sent it back. Empty: ask the plugin.
  std::span<const uint8_t> applies;
  // run_scores also keeps each plugin's raw scores (before normalizing),
  // for `schedplug simulate --explain`, explain's recent cycles and the shim's
  // simulator annotations (PreScoreRequest.want_raw_scores).
  bool keep_raw_scores = false;
  // run_scores leaves the scores of a plugin with a declared normalization
  // policy raw (PluginScoreOutcome::raw, raw_only), for the shim to
  // normalize over the nodes kube-scheduler scores (scores ahead); a plugin
  // with its own normalize_score is normalized as usual.
  bool raw_scores = false;
  // The pod's scheduling cycle (PreFilter began it): a plugin it has a
  // scope for runs with that scope's state and gates, and `applies` is
  // not consulted for it. nullptr, or a plugin it lacks: the chain begins
  // the pod itself for that plugin and ends it before the next plugin.
  const PodCycle* cycle = nullptr;
};

// How one plugin meets the pod in one chain run: through the cycle's
// PodScope when there is one, else through the shim's applies answer (a
// plugin without pod_begin), else through a scope begun here and ended
// when this object goes away.
class ChainPod {
 public:
  // `p`: the plugin's index in the chain's list (for limits.applies);
  // `for_filter`: which gate counts (filter's or score's).
  ChainPod(const PluginInstance& plugin, size_t p, const schedplug_pod& pod,
           const ChainLimits& limits, bool for_filter);
  ChainPod(const ChainPod&) = delete;
  ChainPod& operator=(const ChainPod&) = delete;

  // The pod view to pass to this plugin's hooks: the chain's pod with the
  // plugin's state set.
  const schedplug_pod& pod() const { return *pod_; }
  // Whether the hook runs for the pod (false also when error() is set).
  bool runs() const { return runs_; }
  // Non-empty when pod_begin failed: the pod fails with it, as an Error.
  const std::string& error() const;
  // Whether this object called the plugin's own gate (no cycle's scope,
  // no answer from the shim, and the plugin has pod_begin or applies).
  bool began() const { return began_; }

 private:
  std::optional<PodScope> local_;
  const PodScope* scope_ = nullptr;
  schedplug_pod with_state_{};
  const schedplug_pod* pod_;
  bool runs_ = true;
  bool began_ = false;
};

// "plugin "X" did not finish <hook> within 80.0 ms (3 of 200 nodes done)",
// or, for a plugin whose deadline was over before it started,
// "plugin "X" did not run: its deadline (80.0 ms) ran out while earlier
// plugins ran". `chain_start` is when the chain began.
std::string unfinished_reason(const PluginInstance& plugin, const char* hook,
                              size_t nodes_done, size_t nodes,
                              const Deadline& deadline,
                              std::chrono::steady_clock::time_point chain_start,
                              bool started);

// Splits `count` items into chunks for `pool_threads` threads: several
// chunks per thread (balance, and deadline checks in between), never so
// small that claiming a chunk costs more than running it.
size_t chunk_size_for(size_t count, unsigned pool_threads);

}  // namespace schedplug::host
