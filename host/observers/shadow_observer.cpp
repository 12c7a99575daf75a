// What PreFilter and PreScore hand to the shadow candidates
// (host/shadow/shadow_runner.hpp): the pod, the nodes the live plugins
// evaluated and what they answered, copied while the call still holds the
// session, so the candidates can run after the answer went out.
#include <algorithm>

#include "host/observers/observers.hpp"

namespace schedplug::host {
namespace {

// True when some plugin of the list has a shadow candidate.
bool any_shadow(const std::vector<const PluginInstance*>& shadows) {
  return std::any_of(shadows.begin(), shadows.end(),
                     [](const PluginInstance* p) { return p != nullptr; });
}

}  // namespace

bool ShadowObserver::needs_normalized_scores(
    const ProfilePlugins& profile) const {
  return !runner_.abandoned() && any_shadow(profile.scorer_shadows);
}

void ShadowObserver::filters_ran(const FiltersRan& ran) {
  // The cycle's first filter pass only (PreFilter's, not FilterNodes').
  const ProfilePlugins& profile = ran.profile;
  if (!ran.begins_cycle || runner_.abandoned() ||
      !any_shadow(profile.filter_shadows))
    return;
  const auto views = ran.views;
  const FilterOutcome& outcome = ran.outcome;
  ShadowFilterJob job;
  job.plugins = ran.plugins;
  job.profile = &profile;
  job.pod = ran.pod;
  std::vector<int> index_of(views.size(), -1);
  for (size_t slot = 0; slot < views.size(); ++slot) {
    if (views[slot] == nullptr) continue;
    index_of[slot] = static_cast<int>(job.nodes.size());
    job.nodes.push_back(ran.table.shared(static_cast<uint32_t>(slot)));
  }
  job.rejected_by.assign(job.nodes.size(), -1);
  job.live_reason.resize(job.nodes.size());
  for (const FilterRejection& r : outcome.rejections) {
    if (r.node >= index_of.size() || index_of[r.node] < 0) continue;
    const auto n = static_cast<size_t>(index_of[r.node]);
    job.rejected_by[n] = static_cast<int>(r.plugin);
    job.live_reason[n] = outcome.reasons[r.reason];
  }
  job.skipped = outcome.skipped;
  job.unfinished.assign(profile.filters.size(), false);
  for (const UnfinishedPlugin& u : outcome.unfinished) {
    for (size_t i = 0; i < profile.filters.size(); ++i) {
      if (profile.filters[i] == u.instance) job.unfinished[i] = true;
    }
  }
  runner_.submit(std::move(job));
}

void ShadowObserver::scores_ran(const ScoresRan& ran) {
  // Candidates compare normalized scores: raw ones (scores ahead, a raw
  // PreScore) are not theirs.
  const ProfilePlugins& profile = ran.profile;
  if (ran.raw || !needs_normalized_scores(profile)) return;
  ShadowScoreJob job;
  job.plugins = ran.plugins;
  job.profile = &profile;
  job.pod = ran.pod;
  job.nodes.reserve(ran.slots.size());
  for (uint32_t slot : ran.slots) job.nodes.push_back(ran.table.shared(slot));
  job.live.resize(profile.scorers.size());
  for (size_t i = 0; i < profile.scorers.size(); ++i) {
    const PluginScoreOutcome& o = ran.outcome.plugins[i];
    if (profile.scorer_shadows[i] != nullptr && !o.skipped && o.error.empty() &&
        o.unfinished.empty())
      job.live[i] = o.scores;
  }
  runner_.submit(std::move(job));
}

}  // namespace schedplug::host
