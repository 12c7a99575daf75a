#include "host/explain/cycle_parts.hpp"

#include <algorithm>
#include <chrono>

namespace schedplug::host {
namespace {

// The part of a cycle summary every call starts with: the pod and its profile.
CycleSummary part_for(const std::string& scheduler_name, const v1::Pod& pod,
                      const NodeTable& table) {
  CycleSummary part;
  part.scheduler_name = scheduler_name;
  part.pod_namespace = pod.namespace_();
  part.pod_name = pod.name();
  part.pod_uid = pod.uid();
  part.started_unix_nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  part.table_version = table.version();
  part.table_names = table.names();
  return part;
}

void add_timings(const ChainRuns& runs, CycleSummary& part) {
  for (const PluginRun& run : runs) {
    for (size_t h = 0; h < kTimedHooks; ++h) {
      const auto hook = static_cast<TimedHook>(h);
      if (!run.hooks.ran(hook)) continue;
      part.timings.push_back({.plugin = run.plugin->name(),
                              .hook = timed_hook_name(hook),
                              .nanos = run.hooks.took(hook).count()});
    }
  }
}

}  // namespace

CycleSummary filter_part(const ProfilePlugins& profile, const v1::Pod& pod,
                         const NodeTable& table, const FilterOutcome& outcome,
                         size_t filtered) {
  CycleSummary part = part_for(profile.scheduler_name, pod, table);
  for (size_t i = 0; i < profile.filters.size(); ++i) {
    part.filters.push_back(profile.filters[i]->name());
    part.filter_skipped.push_back(i < outcome.skipped.size() &&
                                  outcome.skipped[i]);
  }
  part.nodes_filtered = static_cast<uint32_t>(filtered);
  part.reasons = outcome.reasons;
  part.rejections.reserve(outcome.rejections.size());
  for (const FilterRejection& r : outcome.rejections) {
    part.rejections.push_back({.node = r.node,
                               .reason = r.reason,
                               .plugin = static_cast<uint16_t>(r.plugin),
                               .code = static_cast<uint8_t>(r.code)});
  }
  add_timings(outcome.runs, part);
  for (const UnfinishedPlugin& u : outcome.unfinished)
    part.unfinished.push_back(u.reason);
  return part;
}

CycleSummary score_part(const ProfilePlugins& profile,
                        const std::vector<int>& weights, const v1::Pod& pod,
                        const NodeTable& table, std::span<const uint32_t> slots,
                        const ScoreOutcome& outcome) {
  CycleSummary part = part_for(profile.scheduler_name, pod, table);
  const size_t scorers = profile.scorers.size();
  for (size_t p = 0; p < scorers; ++p) {
    const PluginScoreOutcome& o = outcome.plugins[p];
    part.scorers.push_back(profile.scorers[p]->name());
    part.scorer_skipped.push_back(o.skipped);
    part.weights.push_back(p < weights.size() ? weights[p] : 1);
    part.scorer_errors.push_back(!o.error.empty() ? o.error : o.unfinished);
  }
  part.scored.assign(slots.begin(), slots.end());
  const size_t n = slots.size();
  // Raw scores ahead have no normalized ones yet: none are kept for them
  // (an empty list stands for zeros).
  const bool normalized = std::any_of(
      outcome.plugins.begin(), outcome.plugins.end(),
      [](const PluginScoreOutcome& o) { return !o.scores.empty(); });
  part.raw.resize(n * scorers, 0);
  if (normalized) part.normalized.resize(n * scorers, 0);
  for (size_t p = 0; p < scorers; ++p) {
    const PluginScoreOutcome& o = outcome.plugins[p];
    for (size_t k = 0; k < std::min(n, o.raw.size()); ++k) {
      part.raw[k * scorers + p] = o.raw[k];
    }
    for (size_t k = 0; k < std::min(n, o.scores.size()); ++k) {
      part.normalized[k * scorers + p] = o.scores[k];
    }
  }
  add_timings(outcome.runs, part);
  return part;
}

void mark_ahead(const ProfilePlugins& profile, const ScoreOutcome& outcome,
                CycleSummary& part) {
  part.scores_ahead = true;
  part.ahead_policy.clear();
  for (size_t p = 0; p < profile.scorers.size(); ++p) {
    const bool raw = p < outcome.plugins.size() && outcome.plugins[p].raw_only;
    part.ahead_policy.push_back(
        raw ? profile.scorers[p]->settings().normalize_policy
            : CycleSummary::kOwnNormalization);
  }
}

}  // namespace schedplug::host
