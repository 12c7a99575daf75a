// PreFilter, FilterNodes and Filter: the node-table delta, the pod cycle
// and the filter chain on all nodes, on a window of them, or on one node
// the shim sends.
#include <algorithm>
#include <span>
#include <string>

#include <spdlog/spdlog.h>

#include "host/chain/filter_chain.hpp"
#include "host/service/call_support.hpp"
#include "host/service/node_window.hpp"

namespace schedplug::host {

using namespace call_support;
namespace {

// A request's `evaluate` as slots.
std::span<const uint32_t> slots_of(
    const google::protobuf::RepeatedField<uint32_t>& evaluate) {
  return {evaluate.data(), static_cast<size_t>(evaluate.size())};
}

// The node views the filters run on: the whole table, or (`evaluate` not
// empty) only its window, in a buffer of the calling thread that the
// chain reads until the call returns.
std::span<const schedplug_node* const> evaluated_views(
    const NodeTable& table,
    const google::protobuf::RepeatedField<uint32_t>& evaluate) {
  if (evaluate.empty()) return table.views();
  thread_local std::vector<const schedplug_node*> window;
  return window_views(table.views(), slots_of(evaluate), window);
}

// How many nodes `views` holds (empty slots are nullptr).
size_t count_nodes(std::span<const schedplug_node* const> views) {
  return static_cast<size_t>(
      std::count_if(views.begin(), views.end(),
                    [](const schedplug_node* n) { return n != nullptr; }));
}

// The cycle's gates for the shim, which sends them back in case the host
// loses the cycle: the plugins whose Filter and Score gates are both shut.
void report_gates(const PodCycle& cycle, const ProfilePlugins& profile,
                  v1::PreFilterResponse& response) {
  response.set_applies_reported(true);
  for (const PluginInstance* plugin : profile.plugins) {
    const PodScope& scope = *cycle.scope_for(plugin);
    if (scope.error().empty() && !scope.runs_filter() && !scope.runs_score())
      response.add_not_applying(plugin->name());
  }
}

}  // namespace

grpc::Status HostService::PreFilter(grpc::ServerContext* context,
                                    const v1::PreFilterRequest* request,
                                    v1::PreFilterResponse* response) {
  if (grpc::Status s = refuse_read_only(*context, "PreFilter"); !s.ok())
    return s;
  GrpcCallContext call_context(context);
  return pre_filter(call_context, *request, *response);
}

grpc::Status HostService::pre_filter(CallContext& context,
                                     const v1::PreFilterRequest& request,
                                     v1::PreFilterResponse& response) {
  Call call = pod_call("PreFilter", context, request);
  call.record_as(v1::RECORDED_METHOD_PRE_FILTER, request, response);
  if (request.has_delta()) call.recorded.delta = &request.delta();
  std::shared_ptr<Session> session;
  const ProfilePlugins* profile = nullptr;
  if (auto s = find_session_and_profile(call, request, session, profile);
      !s.ok()) {
    return finish(call, s);
  }
  PodData pod_data;
  TableDelta delta;
  try {
    pod_data = pod_from_proto(request.pod());
    // Refused before the table is reached, so without the table-version
    // trailer: a resync would send the same node again.
    delta = delta_from_proto(request.delta());
  } catch (const FieldLimitError& e) {
    return finish(call, field_limit_status(e));
  }
  // Also before the table: the delta is not applied.
  if (std::string error = window_error(slots_of(request.evaluate()),
                                       "PreFilter", /*required=*/false);
      !error.empty()) {
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT, error});
  }
  const size_t pod_bytes = estimated_bytes(pod_data);
  auto pod = std::make_unique<const PodRecord>(std::move(pod_data));

  const SessionCall lock(*session, call.deadline, "PreFilter " + call.what);
  if (!lock.owns())
    return finish(call, busy_with_delta(call, context, *session, lock));
  if (session->evicted()) {
    return finish(call, {grpc::StatusCode::FAILED_PRECONDITION,
                         unknown_session(request.session_id())});
  }
  const NodeTable& table = session->table;
  if (grpc::Status s = apply_delta(call, context, *session, delta, pod_bytes);
      !s.ok()) {
    return finish(call, s);
  }
  record_placements(request);
  response.set_table_version(table.version());
  identity_of(call).to_proto(*response.mutable_identity());

  // A new pod cycle: the previous one (a pod that never reached PreScore)
  // ends first, then every native plugin of the profile begins this pod
  // once (pod_begin, or applies() for a plugin without it). The single-node
  // Filter and PreScore calls of this cycle use the same per-pod states;
  // the shim also gets the gates (not_applying) in case the host loses the
  // cycle.
  session->end_cycle();
  const std::string key = cycle_key(request.scheduler_name(), pod->data());
  const auto cycle = std::make_shared<const PodCycle>(
      key, std::move(pod), profile->plugins, call.plugins);
  report_gates(*cycle, *profile, response);
  record_begins(*cycle);
  session->begin_cycle(cycle);
  const auto chain_start = Clock::now();
  const std::vector<Deadline> deadlines =
      plugin_deadlines(call, profile->filter_timeout_ms, chain_start);
  // With `evaluate`, only its window (FilterNodes may ask about the rest).
  response.set_windowed(!request.evaluate().empty());
  const auto views = evaluated_views(table, request.evaluate());
  FilterOutcome outcome = run_filters(profile->filters, cycle->pod().view(),
                                      views, *context_.pool, call.deadline,
                                      {.plugin_deadlines = deadlines,
                                       .applies = {},
                                       .keep_raw_scores = false,
                                       .cycle = cycle.get()});
  record_runs(outcome.runs, "filter");
  if (recent_.enabled()) {
    record_filters(call, *session, *profile, request.pod(), table, outcome,
                   count_nodes(views), /*starts=*/true);
  }
  submit_shadow_filters(call, *profile, request.pod(), table, views, outcome);
  if (request.score_ahead()) {
    score_ahead(call, *session, *profile, request.pod(), cycle.get(),
                cycle->pod().view(), table, views, outcome, {}, response);
  }
  fill_filter_response(call, *profile, outcome, response);
  if (spdlog::should_log(spdlog::level::debug)) {  // only finish() reads it
    call.summary = fmt::format(
        "{} nodes{} (delta +{} -{}{}), {} rejected, table version {}",
        table.size(), response.windowed() ? " (windowed)" : "",
        delta.upserts.size(), delta.removed.size(), delta.full ? ", full" : "",
        response.rejected_nodes_size(), table.version());
  }
  return finish(call, grpc::Status::OK);
}

void HostService::fill_filter_response(Call& call,
                                       const ProfilePlugins& profile,
                                       FilterOutcome& outcome,
                                       v1::PreFilterResponse& response) {
  for (size_t i = 0; i < profile.filters.size(); ++i) {
    response.add_plugins(profile.filters[i]->name());
    response.add_skipped(outcome.skipped[i]);
  }
  {
    std::vector<std::string> reasons, names;
    for (const UnfinishedPlugin& u : outcome.unfinished) {
      v1::UnfinishedPlugin* out = response.add_unfinished();
      out->set_plugin(u.instance->name());
      out->set_reason(u.reason);
      reasons.push_back(u.reason);
      names.push_back(u.instance->name());
    }
    note_unfinished(call, reasons, names, outcome.runs);
  }
  for (std::string& reason : outcome.reasons)
    response.add_reasons(std::move(reason));
  const int n = static_cast<int>(outcome.rejections.size());
  response.mutable_rejected_nodes()->Reserve(n);
  response.mutable_rejected_by()->Reserve(n);
  response.mutable_codes()->Reserve(n);
  response.mutable_reason()->Reserve(n);
  for (const FilterRejection& r : outcome.rejections) {
    response.add_rejected_nodes(r.node);
    response.add_rejected_by(r.plugin);
    response.add_codes(static_cast<v1::Code>(r.code));
    response.add_reason(r.reason);
  }
}

grpc::Status HostService::FilterNodes(grpc::ServerContext* context,
                                      const v1::FilterNodesRequest* request,
                                      v1::PreFilterResponse* response) {
  if (grpc::Status s = refuse_read_only(*context, "FilterNodes"); !s.ok())
    return s;
  GrpcCallContext call_context(context);
  return filter_nodes(call_context, *request, *response);
}

grpc::Status HostService::filter_nodes(CallContext& context,
                                       const v1::FilterNodesRequest& request,
                                       v1::PreFilterResponse& response) {
  Call call = pod_call("FilterNodes", context, request);
  call.record_as(v1::RECORDED_METHOD_FILTER_NODES, request, response);
  std::shared_ptr<Session> session;
  const ProfilePlugins* profile = nullptr;
  if (auto s = find_session_and_profile(call, request, session, profile);
      !s.ok()) {
    return finish(call, s);
  }
  if (std::string error = window_error(slots_of(request.evaluate()),
                                       "FilterNodes", /*required=*/true);
      !error.empty()) {
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT, error});
  }
  PodData pod_data;
  try {
    pod_data = pod_from_proto(request.pod());
  } catch (const FieldLimitError& e) {
    return finish(call, field_limit_status(e));
  }
  const PodRecord pod(std::move(pod_data));

  const SessionCall lock(*session, call.deadline, "FilterNodes " + call.what);
  if (!lock.owns()) return finish(call, busy_status(call, lock));
  if (session->evicted()) {
    return finish(call, {grpc::StatusCode::FAILED_PRECONDITION,
                         unknown_session(request.session_id())});
  }
  const NodeTable& table = session->table;
  call.saw_table(table);
  if (grpc::Status s =
          table_version_status(table, request.table_version(), "FilterNodes");
      !s.ok()) {
    return finish(call, s);
  }
  response.set_table_version(table.version());
  // The cycle PreFilter began, when the host still holds it: its per-pod
  // states, and it stays the session's (PreScore follows). Without it,
  // each plugin begins and ends the pod within this run, as for Filter,
  // with the shim's gates for plugins without pod_begin.
  const auto cycle =
      session->cycle(cycle_key(request.scheduler_name(), pod.data()));
  if (cycle) continue_cycle(call, *cycle, profile);
  identity_of(call).to_proto(*response.mutable_identity());
  if (cycle) report_gates(*cycle, *profile, response);
  const std::vector<uint8_t> applies = known_applies(request, profile->filters);
  const std::vector<Deadline> deadlines =
      plugin_deadlines(call, profile->filter_timeout_ms, Clock::now());
  response.set_windowed(true);
  const auto views = evaluated_views(table, request.evaluate());
  FilterOutcome outcome = run_filters(profile->filters, pod.view(), views,
                                      *context_.pool, call.deadline,
                                      {.plugin_deadlines = deadlines,
                                       .applies = applies,
                                       .keep_raw_scores = false,
                                       .cycle = cycle.get()});
  record_runs(outcome.runs, "filter");
  if (recent_.enabled()) {
    record_filters(call, *session, *profile, request.pod(), table, outcome,
                   count_nodes(views), /*starts=*/false);
  }
  if (request.score_ahead()) {
    score_ahead(call, *session, *profile, request.pod(), cycle.get(),
                pod.view(), table, views, outcome,
                known_applies(request, profile->scorers), response);
  }
  fill_filter_response(call, *profile, outcome, response);
  if (spdlog::should_log(spdlog::level::debug)) {  // only finish() reads it
    call.summary = fmt::format(
        "{} evaluate pairs on {} nodes, {} rejected, table version {}, {}",
        request.evaluate_size() / 2, table.size(),
        response.rejected_nodes_size(), table.version(),
        cycle ? "the cycle's pod states" : "no cycle held");
  }
  return finish(call, grpc::Status::OK);
}

grpc::Status HostService::Filter(grpc::ServerContext* context,
                                 const v1::FilterRequest* request,
                                 v1::FilterResponse* response) {
  if (grpc::Status s = refuse_read_only(*context, "Filter"); !s.ok()) return s;
  GrpcCallContext call_context(context);
  return filter(call_context, *request, *response);
}

grpc::Status HostService::filter(CallContext& call_context,
                                 const v1::FilterRequest& request_in,
                                 v1::FilterResponse& response_out) {
  const v1::FilterRequest* request = &request_in;
  v1::FilterResponse* response = &response_out;
  Call call("Filter", &call_context);
  call.plugins = plugins();
  call.deadline = deadline_for(call_context, call.start);
  call.what = "pod " + pod_label(request->pod()) + " on node \"" +
              clipped(request->node().name()) + "\" (profile \"" +
              request->scheduler_name() + "\")";
  call.record_as(v1::RECORDED_METHOD_FILTER, *request, *response);
  std::shared_ptr<Session> session;
  const ProfilePlugins* profile = nullptr;
  if (auto s = find_session_and_profile(call, *request, session, profile);
      !s.ok()) {
    return finish(call, s);
  }
  // The cycle's per-pod states, when PreFilter began this pod's cycle (and
  // the plugin set it began with).
  const auto cycle = session->cycle(
      cycle_key(request->scheduler_name(), request->pod().namespace_(),
                request->pod().name(), request->pod().uid()));
  if (cycle) continue_cycle(call, *cycle, profile);
  std::vector<const PluginInstance*> filters;
  if (request->plugins().empty()) {
    filters = profile->filters;
  } else {
    for (const std::string& name : request->plugins()) {
      const PluginInstance* plugin = profile->filter_named(name);
      if (plugin == nullptr) {
        std::string known;
        for (const PluginInstance* f : profile->filters) {
          known += (known.empty() ? "\"" : ", \"") + f->name() + "\"";
        }
        return finish(
            call, {grpc::StatusCode::INVALID_ARGUMENT,
                   "unknown plugin \"" + name + "\": profile \"" +
                       profile->scheduler_name +
                       "\" has no native Filter plugin of that name (it has " +
                       (known.empty() ? std::string("none") : known) + ")"});
      }
      filters.push_back(plugin);
    }
  }
  if (request->node().name().empty()) {
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT,
                         "Filter: the node has no name"});
  }
  PodData pod_data;
  NodeData node_data;
  try {
    pod_data = pod_from_proto(request->pod());
    node_data = node_from_proto(request->node());
  } catch (const FieldLimitError& e) {
    return finish(call, field_limit_status(e));
  }
  const PodRecord pod(std::move(pod_data));
  const NodeRecord node(std::move(node_data));
  std::vector<int> timeouts;
  for (const PluginInstance* f : filters) {
    int t = 0;
    for (size_t i = 0; i < profile->filters.size(); ++i) {
      if (profile->filters[i] == f && i < profile->filter_timeout_ms.size())
        t = profile->filter_timeout_ms[i];
    }
    timeouts.push_back(t);
  }
  const std::vector<Deadline> deadlines =
      plugin_deadlines(call, timeouts, Clock::now());
  const std::vector<uint8_t> applies = known_applies(*request, filters);
  SingleFilterResult result =
      run_filters_on_node(filters, pod.view(), node.view(), call.deadline,
                          {.plugin_deadlines = deadlines,
                           .applies = applies,
                           .keep_raw_scores = false,
                           .cycle = cycle.get()});
  record_runs(result.runs, "filter");
  {
    std::vector<std::string> reasons, names;
    for (const UnfinishedPlugin& u : result.unfinished) {
      v1::UnfinishedPlugin* out = response->add_unfinished();
      out->set_plugin(u.instance->name());
      out->set_reason(u.reason);
      reasons.push_back(u.reason);
      names.push_back(u.instance->name());
    }
    note_unfinished(call, reasons, names, result.runs);
  }
  identity_of(call).to_proto(*response->mutable_identity());
  response->set_code(static_cast<v1::Code>(result.verdict.code));
  if (result.plugin != nullptr) response->set_plugin(result.plugin->name());
  response->set_reason(result.verdict.reason);
  call.summary = result.plugin == nullptr
                     ? std::string("fits")
                     : "rejected by " + result.plugin->name();
  return finish(call, grpc::Status::OK);
}

}  // namespace schedplug::host
