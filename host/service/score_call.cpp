// PreScore: the score chain on the feasible nodes of the cycle's table;
// and the same chain run ahead of PreScore, raw, within PreFilter and
// FilterNodes (scores ahead, docs/protocol.md).
#include <algorithm>
#include <string>

#include <spdlog/spdlog.h>

#include "host/chain/score_chain.hpp"
#include "host/service/call_support.hpp"

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

size_t HostService::fill_scores(
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

void HostService::score_ahead(Call& call, const Session& session,
                              const ProfilePlugins& profile,
                              const v1::Pod& pod_message, const PodCycle* cycle,
                              const schedplug_pod& pod, const NodeTable& table,
                              std::span<const schedplug_node* const> views,
                              const FilterOutcome& filtered,
                              std::span<const uint8_t> applies,
                              v1::PreFilterResponse& response) {
  // Nothing to score, a filter that did not finish (its other nodes are
  // the failure policy's), or shadow candidates that compare normalized
  // scores: the shim calls PreScore instead.
  if (profile.scorers.empty() || !filtered.unfinished.empty() ||
      shadows_scores(profile)) {
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
  ScoreOutcome outcome =
      run_scores(profile.scorers, pod, nodes, *context_.pool, call.deadline,
                 {.plugin_deadlines = deadlines,
                  .applies = applies,
                  .keep_raw_scores = recent_.enabled(),
                  .raw_scores = true,
                  .cycle = cycle});
  record_runs(outcome.runs, "score");
  if (recent_.enabled()) {
    record_scores(call, session, profile, pod_message, table, nodes, outcome,
                  /*starts=*/false, /*ahead=*/true);
  }
  fill_scores(call, profile, outcome, /*with_raw=*/false,
              *out.mutable_plugins());
}

grpc::Status HostService::PreScore(grpc::ServerContext* context,
                                   const v1::PreScoreRequest* request,
                                   v1::PreScoreResponse* response) {
  if (grpc::Status s = refuse_read_only(*context, "PreScore"); !s.ok())
    return s;
  GrpcCallContext call_context(context);
  return pre_score(call_context, *request, *response);
}

grpc::Status HostService::pre_score(CallContext& context,
                                    const v1::PreScoreRequest& request,
                                    v1::PreScoreResponse& response) {
  Call call = pod_call("PreScore", context, request);
  call.record_as(v1::RECORDED_METHOD_PRE_SCORE, request, response);
  if (request.has_delta()) call.recorded.delta = &request.delta();
  std::shared_ptr<Session> session;
  const ProfilePlugins* profile = nullptr;
  if (auto s = find_session_and_profile(call, request, session, profile);
      !s.ok()) {
    return finish(call, s);
  }
  PodData pod_data;
  TableDelta delta;
  const bool carries_delta = request.has_delta();
  try {
    pod_data = pod_from_proto(request.pod());
    if (carries_delta) delta = delta_from_proto(request.delta());
  } catch (const FieldLimitError& e) {
    return finish(call, field_limit_status(e));
  }
  const size_t pod_bytes = estimated_bytes(pod_data);
  const PodRecord pod(std::move(pod_data));

  const SessionCall lock(*session, call.deadline, "PreScore " + call.what);
  if (!lock.owns()) {
    return finish(call, carries_delta
                            ? busy_with_delta(call, context, *session, lock)
                            : busy_status(call, lock));
  }
  if (session->evicted()) {
    return finish(call, {grpc::StatusCode::FAILED_PRECONDITION,
                         unknown_session(request.session_id())});
  }
  const NodeTable& table = session->table;
  call.saw_table(table);
  if (carries_delta) {
    // A profile without native filters: this call is the pod's only one,
    // so it brings the table up to date and the previous pod's cycle ends.
    if (grpc::Status s = apply_delta(call, context, *session, delta, pod_bytes);
        !s.ok()) {
      return finish(call, s);
    }
    session->end_cycle();
    response.set_table_version(table.version());
  } else if (grpc::Status s = table_version_status(
                 table, request.table_version(), "PreScore");
             !s.ok()) {
    return finish(call, s);
  }
  record_placements(request);
  std::vector<const schedplug_node*> nodes;
  nodes.reserve(static_cast<size_t>(request.nodes_size()));
  for (uint32_t slot : request.nodes()) {
    const CompactNode* record = table.at(slot);
    if (record == nullptr) {
      return finish(call, {grpc::StatusCode::INVALID_ARGUMENT,
                           fmt::format("PreScore: node index {} holds no node "
                                       "in table version {}",
                                       slot, table.version())});
    }
    nodes.push_back(&record->view());
  }
  // Without a cycle (none began, or the delta ended it) each plugin begins
  // and ends the pod within the chain run.
  const auto cycle =
      carries_delta
          ? nullptr
          : session->cycle(cycle_key(request.scheduler_name(), pod.data()));
  if (cycle) continue_cycle(call, *cycle, profile);
  const std::vector<uint8_t> applies = known_applies(request, profile->scorers);
  const std::vector<Deadline> deadlines =
      plugin_deadlines(call, profile->scorer_timeout_ms, Clock::now());
  // `raw`: the shim normalizes over the nodes kube-scheduler scores; shadow
  // candidates compare normalized scores, so a profile with any is
  // answered as without `raw` (the shim then asks again for exactly the
  // nodes kube-scheduler scores).
  const bool raw = request.raw() && !shadows_scores(*profile);
  ScoreOutcome outcome = run_scores(
      profile->scorers, pod.view(), nodes, *context_.pool, call.deadline,
      {.plugin_deadlines = deadlines,
       .applies = applies,
       .keep_raw_scores = recent_.enabled() || request.want_raw_scores(),
       .raw_scores = raw,
       .cycle = cycle.get()});
  identity_of(call).to_proto(*response.mutable_identity());
  if (!raw) {
    submit_shadow_scores(
        call, *profile, request.pod(), table,
        {request.nodes().data(), static_cast<size_t>(request.nodes_size())},
        outcome);
  }
  // PreScore is the cycle's last call: its per-pod states end now.
  if (cycle) session->end_cycle(cycle.get());
  record_runs(outcome.runs, "score");
  if (recent_.enabled()) {
    record_scores(call, *session, *profile, request.pod(), table, nodes,
                  outcome,
                  /*starts=*/carries_delta, /*ahead=*/raw);
  }
  const size_t failed =
      fill_scores(call, *profile, outcome, request.want_raw_scores(),
                  *response.mutable_plugins());
  if (spdlog::should_log(spdlog::level::debug)) {
    call.summary = fmt::format("{} nodes scored by {} plugins, {} failed",
                               nodes.size(), profile->scorers.size(), failed);
  }
  return finish(call, grpc::Status::OK);
}

}  // namespace schedplug::host
