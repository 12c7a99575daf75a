// What PreFilter, FilterNodes, PreScore and NoteCycles add to the recent
// cycles Explain answers from (host/explain/recent_cycles.hpp).
#include <algorithm>

#include "host/explain/cycle_parts.hpp"
#include "host/observers/observers.hpp"

namespace schedplug::host {

void ExplainObserver::store(const Session& session, bool starts,
                            CycleSummary part) {
  const RecentCycles::Stats held =
      recent_.add(session.id, starts, std::move(part));
  if (metrics_) {
    metrics_->recent_cycles(held.cycles, held.bytes, held.dropped_count,
                            held.dropped_memory);
  }
}

void ExplainObserver::filters_ran(const FiltersRan& ran) {
  if (!recent_.enabled()) return;
  const auto filtered = static_cast<size_t>(
      std::count_if(ran.views.begin(), ran.views.end(),
                    [](const schedplug_node* n) { return n != nullptr; }));
  store(ran.session, ran.begins_cycle,
        filter_part(ran.profile, ran.pod, ran.table, ran.outcome, filtered));
}

void ExplainObserver::scores_ran(const ScoresRan& ran) {
  if (!recent_.enabled()) return;
  static const std::vector<int> kNoWeights;
  const auto& all = ran.plugins->score_weights;
  const auto weights = all.find(ran.profile.scheduler_name);
  CycleSummary part = score_part(
      ran.profile, weights == all.end() ? kNoWeights : weights->second, ran.pod,
      ran.table, ran.slots, ran.outcome);
  // Scores ahead are kept raw until the shim says which of the nodes
  // kube-scheduler scored (Placement.scored).
  if (ran.raw) mark_ahead(ran.profile, ran.outcome, part);
  store(ran.session, ran.begins_cycle, std::move(part));
}

void ExplainObserver::placed(
    const google::protobuf::RepeatedPtrField<v1::Placement>& placed) {
  if (!recent_.enabled()) return;
  for (const v1::Placement& p : placed) {
    if (!p.scored().empty()) {
      recent_.scored(p.pod_uid(),
                     {p.scored().data(), static_cast<size_t>(p.scored_size())});
    }
    if (!p.node().empty()) {
      if (p.unreserved()) {
        recent_.unreserved(p.pod_uid(), p.node());
      } else {
        recent_.placed(p.pod_uid(), p.node());
      }
    }
    if (p.unschedulable()) recent_.unschedulable(p.pod_uid(), p.message());
  }
}

}  // namespace schedplug::host
