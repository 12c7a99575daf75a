#include "host/chain/score_chain.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>

namespace schedplug::host {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kNoError = std::numeric_limits<size_t>::max();

std::string node_name(const schedplug_node_score& s) {
  return std::string(s.node_name.data == nullptr ? "" : s.node_name.data,
                     s.node_name.len);
}

// The host's own guarantee, independent of how the plugin normalized: a
// value outside [0, 100] is an error that names the plugin, never clamped.
std::string out_of_range(const PluginInstance& plugin,
                         std::span<const schedplug_node_score> scores) {
  for (const auto& s : scores) {
    if (s.score < 0 || s.score > 100) {
      return "plugin \"" + plugin.name() + "\" gave node \"" + node_name(s) +
             "\" the score " + std::to_string(s.score) +
             " after normalizing; scores must be in [0, 100] (fix its "
             "normalize_score, or declare a normalize_policy)";
    }
  }
  return {};
}

}  // namespace

ScoreOutcome run_scores(std::span<const PluginInstance* const> scorers,
                        const schedplug_pod& pod,
                        std::span<const schedplug_node* const> nodes,
                        ThreadPool& pool, const Deadline& deadline,
                        const ChainLimits& limits) {
  ScoreOutcome out;
  const auto chain_start = Clock::now();
  out.plugins.resize(scorers.size());
  out.runs.resize(scorers.size());

  const size_t chunk = chunk_size_for(nodes.size(), pool.workers());
  const size_t chunks = (nodes.size() + chunk - 1) / chunk;
  std::vector<std::pair<size_t, std::string>> first_error(chunks);
  std::vector<uint64_t> errors(chunks);
  std::vector<schedplug_node_score> scores(nodes.size());

  for (size_t p = 0; p < scorers.size(); ++p) {
    const PluginInstance& plugin = *scorers[p];
    const Deadline& plugin_deadline = p < limits.plugin_deadlines.size()
                                          ? limits.plugin_deadlines[p]
                                          : deadline;
    PluginRun& run = out.runs[p];
    PluginScoreOutcome& result = out.plugins[p];
    run.plugin = &plugin;
    if (plugin_deadline.expired()) {
      result.unfinished =
          unfinished_reason(plugin, "score", 0, nodes.size(), plugin_deadline,
                            chain_start, false);
      continue;
    }
    const auto start = Clock::now();
    const ChainPod gate(plugin, p, pod, limits, /*for_filter=*/false);
    const auto gated = Clock::now();
    if (gate.began()) run.hooks.add(TimedHook::kBeginPod, gated - start);
    if (!gate.error().empty()) {
      result.error = gate.error();
      ++run.errors;
      run.duration = Clock::now() - start;
      continue;
    }
    if (!gate.runs()) {
      result.skipped = true;
      run.skipped = true;
      run.duration = Clock::now() - start;
      continue;
    }
    for (auto& e : first_error) e = {kNoError, {}};
    std::fill(errors.begin(), errors.end(), 0);
    std::atomic<bool> cut{false};
    const std::function<bool()> stop = [&plugin_deadline] {
      return plugin_deadline.expired();
    };
    const std::function<void(size_t)> body = [&](size_t c) {
      const size_t end = std::min(nodes.size(), (c + 1) * chunk);
      for (size_t i = c * chunk; i < end; ++i) {
        // Within a chunk too, so a slow plugin stops close to its deadline.
        if (((i - c * chunk) & 7) == 7 && plugin_deadline.expired()) {
          cut.store(true, std::memory_order_relaxed);
          break;
        }
        const schedplug_node& node = *nodes[i];
        scores[i].node_name = node.name;
        ScoreResult r = plugin.score(gate.pod(), node);
        scores[i].score = r.score;
        if (r.code != SCHEDPLUG_SUCCESS) {
          ++errors[c];
          if (first_error[c].first == kNoError) {
            first_error[c] = {i, std::move(r.reason)};
          }
        }
      }
    };
    const size_t ran = pool.parallel_for(
        chunks, body, stop, plugin.score_cost().worth_sharing(nodes.size()));
    const auto scored = Clock::now();
    run.hooks.add(TimedHook::kScore, scored - gated);
    run.calls = std::min(nodes.size(), ran * chunk);
    plugin.score_cost().add(scored - start, run.calls);
    if (ran < chunks || cut.load(std::memory_order_relaxed)) {
      run.duration = scored - start;
      result.unfinished =
          unfinished_reason(plugin, "score", run.calls, nodes.size(),
                            plugin_deadline, chain_start, true);
      continue;
    }
    for (size_t c = 0; c < chunks; ++c) {
      run.errors += errors[c];
      if (result.error.empty() && first_error[c].first != kNoError) {
        result.error = std::move(first_error[c].second);
      }
    }
    result.raw_only = limits.raw_scores && result.error.empty() &&
                      !plugin.library().has_normalize_score();
    if (limits.keep_raw_scores || result.raw_only) {
      result.raw.reserve(scores.size());
      for (const auto& s : scores) result.raw.push_back(s.score);
    }
    if (result.raw_only) {
      run.duration = Clock::now() - start;
      continue;
    }
    if (result.error.empty()) {
      if (plugin_deadline.expired()) {
        run.duration = Clock::now() - start;
        result.unfinished =
            unfinished_reason(plugin, "normalize_score", nodes.size(),
                              nodes.size(), plugin_deadline, chain_start, true);
        continue;
      }
      const auto normalize_start = Clock::now();
      Verdict normalized = plugin.normalize(gate.pod(), scores);
      run.hooks.add(TimedHook::kNormalize, Clock::now() - normalize_start);
      if (!normalized.ok()) {
        result.error = std::move(normalized.reason);
      } else {
        result.error = out_of_range(plugin, scores);
      }
      if (!result.error.empty()) ++run.errors;
    }
    if (result.error.empty()) {
      result.scores.reserve(scores.size());
      for (const auto& s : scores) result.scores.push_back(s.score);
    }
    run.duration = Clock::now() - start;
  }
  return out;
}

}  // namespace schedplug::host
