// What the filter and score chains report besides their answers: per
// plugin timing (for metrics and slow-call logs), and the plugins that did
// not finish before their deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "host/chain/deadline.hpp"
#include "host/runtime/plugin_instance.hpp"

namespace schedplug::host {

// One plugin's share of one chain run.
struct PluginRun {
  const PluginInstance* plugin = nullptr;
  std::chrono::nanoseconds duration{0};
  uint64_t calls = 0;    // hook calls (nodes evaluated)
  uint64_t errors = 0;   // ERROR verdicts
  bool skipped = false;  // applies() said no
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
  // for `schedplug simulate --explain`.
  bool keep_raw_scores = false;
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
