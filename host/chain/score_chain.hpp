// PreScore's work: every applying native Score plugin on the feasible
// nodes (in parallel over nodes), then each plugin's normalization. What
// leaves here is in [0, 100] or is an error that names the plugin.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "host/chain/chain_types.hpp"
#include "host/chain/deadline.hpp"
#include "host/chain/thread_pool.hpp"
#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {

struct PluginScoreOutcome {
  bool skipped = false;         // applies() said no; scores is empty
  std::vector<int64_t> scores;  // normalized, parallel to `nodes`
  // Before normalizing, parallel to `nodes`; only with
  // ChainLimits::keep_raw_scores or raw_scores, and not when the plugin was
  // skipped or did not finish.
  std::vector<int64_t> raw;
  // ChainLimits::raw_scores left this plugin's scores raw: `scores` is
  // empty, `raw` holds them (its normalization policy is the shim's to
  // apply; a value outside [0, 100] under NONE is not checked here).
  bool raw_only = false;
  std::string error;  // set: scores is empty
  // Set when the plugin did not finish before its deadline (scores is then
  // empty): says which plugin and why. Other plugins still run.
  std::string unfinished;
};

struct ScoreOutcome {
  std::vector<PluginScoreOutcome> plugins;  // parallel to `scorers`
  ChainRuns runs;
};

// Every entry of `nodes` must be non-null. A plugin that runs out of time
// is reported in its PluginScoreOutcome::unfinished; the next plugins run
// until their own deadlines.
ScoreOutcome run_scores(std::span<const PluginInstance* const> scorers,
                        const schedplug_pod& pod,
                        std::span<const schedplug_node* const> nodes,
                        ThreadPool& pool, const Deadline& deadline,
                        const ChainLimits& limits = {});

}  // namespace schedplug::host
