// PreScore: the score chain on the feasible nodes of the cycle's table;
// and the same chain run ahead of PreScore, raw, within PreFilter and
// FilterNodes (scores ahead, docs/protocol.md).
#include <algorithm>
#include <string>

#include <spdlog/spdlog.h>

#include "host/chain/score_chain.hpp"
#include "host/pipeline/pod_call.hpp"

namespace schedplug::host {

using namespace call_support;

namespace {

// How the shim normalizes a plugin's scores: its declared policy when the
// chain left them raw, else the plugin's own normalization (already done).
v1::Normalization normalization_of(const PluginInstance& plugin,
                                   const PluginScoreOutcome& outcome) {
  if (!outcome.raw_only) return v1::NORMALIZATION_BY_PLUGIN;
  switch (plugin.settings().normalize_policy) {
    case SCHEDPLUG_NORMALIZE_LINEAR:
      return v1::NORMALIZATION_LINEAR;
    case SCHEDPLUG_NORMALIZE_REVERSE:
      return v1::NORMALIZATION_REVERSE;
    default:
      return v1::NORMALIZATION_NONE;
  }
}

}  // namespace

size_t CallPipeline::fill_scores(
    Call& call, const ProfilePlugins& profile, ScoreOutcome& outcome,
    bool with_raw, google::protobuf::RepeatedPtrField<v1::PluginScores>& out) {
  size_t failed = 0;
  std::vector<std::string> reasons, names;
  for (size_t i = 0; i < profile.scorers.size(); ++i) {
    PluginScoreOutcome& o = outcome.plugins[i];
    v1::PluginScores* scores = out.Add();
    scores->set_plugin(profile.scorers[i]->name());
    scores->set_skipped(o.skipped);
    scores->set_normalization(normalization_of(*profile.scorers[i], o));
    // Raw scores instead of normalized ones when the chain left them raw;
    // beside them when asked (the shim's simulator annotations). A plugin
    // that failed has neither.
    if (o.raw_only || (with_raw && !o.scores.empty())) {
      scores->mutable_raw()->Add(o.raw.begin(), o.raw.end());
    }
    if (!o.raw_only) {
      scores->mutable_scores()->Add(o.scores.begin(), o.scores.end());
    }
    if (!o.error.empty()) {
      ++failed;
      spdlog::warn("{} {}: {}", call.method, call.what, o.error);
      scores->set_error(std::move(o.error));
    }
    if (!o.unfinished.empty()) {
      ++failed;
      reasons.push_back(o.unfinished);
      names.push_back(profile.scorers[i]->name());
      scores->set_unfinished(std::move(o.unfinished));
    }
  }
  note_unfinished(call, reasons, names, outcome.runs);
  return failed;
}

void CallPipeline::score_ahead(Call& call, const PodCallState& state,
                               std::span<const schedplug_node* const> views,
                               const FilterOutcome& filtered,
                               std::span<const uint8_t> applies,
                               v1::PreFilterResponse& response) {
  const ProfilePlugins& profile = *state.profile;
  // Nothing to score, a filter that did not finish (its other nodes are
  // the failure policy's), or observers that compare normalized scores:
  // the shim calls PreScore instead.
  if (profile.scorers.empty() || !filtered.unfinished.empty() ||
      needs_normalized_scores(profile)) {
    return;
  }
  v1::ScoresAhead& out = *response.mutable_scores_ahead();
  std::vector<const schedplug_node*> nodes;
  nodes.reserve(views.size());
  auto rejected = filtered.rejections.begin();
  for (size_t slot = 0; slot < views.size(); ++slot) {
    if (views[slot] == nullptr) continue;
    while (rejected != filtered.rejections.end() && rejected->node < slot) {
      ++rejected;
    }
    if (rejected != filtered.rejections.end() && rejected->node == slot) {
      continue;
    }
    nodes.push_back(views[slot]);
    out.add_nodes(static_cast<uint32_t>(slot));
  }
  const std::vector<Deadline> deadlines =
      plugin_deadlines(call, profile.scorer_timeout_ms, Clock::now());
  ScoreOutcome outcome = run_scores(profile.scorers, state.pod.view(), nodes,
                                    *context_.pool, call.deadline,
                                    {.plugin_deadlines = deadlines,
                                     .applies = applies,
                                     .keep_raw_scores = keeps_raw_scores_,
                                     .raw_scores = true,
                                     .cycle = state.cycle.get()});
  tell(&CallObserver::chain_ran, outcome.runs, std::string_view("score"));
  tell(&CallObserver::scores_ran,
       ScoresRan{
           .plugins = call.plugins,
           .session = state.session,
           .profile = profile,
           .pod = state.pod_message,
           .table = state.table,
           .nodes = nodes,
           .slots = {out.nodes().data(), static_cast<size_t>(out.nodes_size())},
           .outcome = outcome,
           .begins_cycle = false,
           .raw = true});
  fill_scores(call, profile, outcome, /*with_raw=*/false,
              *out.mutable_plugins());
}

grpc::Status CallPipeline::pre_score(CallContext& context,
                                     const v1::PreScoreRequest& request,
                                     v1::PreScoreResponse& response) {
  // With a delta (a profile without native filters) this call is the
  // pod's only one: it brings the table up to date and the previous pod's
  // cycle ends; without a cycle each plugin begins and ends the pod within
  // the chain run.
  const bool carries_delta = request.has_delta();
  const PodCallPlan plan{.method = "PreScore",
                         .recorded = v1::RECORDED_METHOD_PRE_SCORE,
                         .delta = carries_delta ? &request.delta() : nullptr,
                         .table_version = request.table_version()};
  return run_pod_call(
      plan, context, request, response,
      [](const ProfilePlugins&) { return grpc::Status::OK; },
      [&](Call& call, const PodCallState& state) -> grpc::Status {
        const NodeTable& table = state.table;
        const ProfilePlugins& profile = *state.profile;
        if (carries_delta) response.set_table_version(table.version());
        std::vector<const schedplug_node*> nodes;
        nodes.reserve(static_cast<size_t>(request.nodes_size()));
        for (uint32_t slot : request.nodes()) {
          const CompactNode* node = table.at(slot);
          if (node == nullptr) {
            return {grpc::StatusCode::INVALID_ARGUMENT,
                    fmt::format("PreScore: node index {} holds no node in "
                                "table version {}",
                                slot, table.version())};
          }
          nodes.push_back(&node->view());
        }
        const std::vector<uint8_t> applies =
            known_applies(request, profile.scorers);
        const std::vector<Deadline> deadlines =
            plugin_deadlines(call, profile.scorer_timeout_ms, Clock::now());
        // `raw`: the shim normalizes over the nodes kube-scheduler scores;
        // observers that compare normalized scores (shadow candidates) get
        // them: such a profile is answered as without `raw` (the shim then
        // asks again for exactly the nodes kube-scheduler scores).
        const bool raw = request.raw() && !needs_normalized_scores(profile);
        ScoreOutcome outcome = run_scores(
            profile.scorers, state.pod.view(), nodes, *context_.pool,
            call.deadline,
            {.plugin_deadlines = deadlines,
             .applies = applies,
             .keep_raw_scores = keeps_raw_scores_ || request.want_raw_scores(),
             .raw_scores = raw,
             .cycle = state.cycle.get()});
        tell(&CallObserver::chain_ran, outcome.runs, std::string_view("score"));
        tell(&CallObserver::scores_ran,
             ScoresRan{.plugins = call.plugins,
                       .session = state.session,
                       .profile = profile,
                       .pod = state.pod_message,
                       .table = table,
                       .nodes = nodes,
                       .slots = {request.nodes().data(),
                                 static_cast<size_t>(request.nodes_size())},
                       .outcome = outcome,
                       .begins_cycle = carries_delta,
                       .raw = raw});
        // PreScore is the cycle's last call: its per-pod states end now.
        if (state.cycle) state.session.end_cycle(state.cycle.get());
        const size_t failed =
            fill_scores(call, profile, outcome, request.want_raw_scores(),
                        *response.mutable_plugins());
        if (spdlog::should_log(spdlog::level::debug)) {
          call.summary =
              fmt::format("{} nodes scored by {} plugins, {} failed",
                          nodes.size(), profile.scorers.size(), failed);
        }
        return grpc::Status::OK;
      });
}

}  // namespace schedplug::host
