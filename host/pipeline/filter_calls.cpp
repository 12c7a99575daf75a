// PreFilter, FilterNodes and Filter: the filter chain on all nodes, on a
// window of them, or on one node the shim sends.
#include <algorithm>
#include <span>
#include <string>

#include <spdlog/spdlog.h>

#include "host/chain/filter_chain.hpp"
#include "host/pipeline/node_window.hpp"
#include "host/pipeline/pod_call.hpp"

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

// The `evaluate` window of a PreFilter or FilterNodes, checked before the
// table is reached (a refused call does not apply its delta).
grpc::Status window_status(
    const google::protobuf::RepeatedField<uint32_t>& evaluate,
    std::string_view method, bool required) {
  std::string error = window_error(slots_of(evaluate), method, required);
  if (error.empty()) return grpc::Status::OK;
  return {grpc::StatusCode::INVALID_ARGUMENT, error};
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

// The plugins that did not finish, into the answer's `out`; returns their
// reasons and names, for note_unfinished.
std::pair<std::vector<std::string>, std::vector<std::string>> answer_unfinished(
    const std::vector<UnfinishedPlugin>& unfinished,
    google::protobuf::RepeatedPtrField<v1::UnfinishedPlugin>& out) {
  std::vector<std::string> reasons, names;
  for (const UnfinishedPlugin& u : unfinished) {
    v1::UnfinishedPlugin* answer = out.Add();
    answer->set_plugin(u.instance->name());
    answer->set_reason(u.reason);
    reasons.push_back(u.reason);
    names.push_back(u.instance->name());
  }
  return {std::move(reasons), std::move(names)};
}

}  // namespace

FilterOutcome CallPipeline::run_filter_chain(
    Call& call, const PodCallState& state,
    std::span<const schedplug_node* const> views,
    std::span<const uint8_t> applies) {
  const ProfilePlugins& profile = *state.profile;
  const std::vector<Deadline> deadlines =
      plugin_deadlines(call, profile.filter_timeout_ms, Clock::now());
  return run_filters(profile.filters, state.pod.view(), views, *context_.pool,
                     call.deadline,
                     {.plugin_deadlines = deadlines,
                      .applies = applies,
                      .keep_raw_scores = false,
                      .cycle = state.cycle.get()});
}

void CallPipeline::tell_filters_ran(
    Call& call, const PodCallState& state,
    std::span<const schedplug_node* const> views, const FilterOutcome& outcome,
    bool begins_cycle) {
  tell(&CallObserver::chain_ran, outcome.runs, std::string_view("filter"));
  tell(&CallObserver::filters_ran, FiltersRan{.plugins = call.plugins,
                                              .session = state.session,
                                              .profile = *state.profile,
                                              .pod = state.pod_message,
                                              .table = state.table,
                                              .views = views,
                                              .outcome = outcome,
                                              .begins_cycle = begins_cycle});
}

FilterOutcome CallPipeline::run_filter_step(
    Call& call, const PodCallState& state,
    std::span<const schedplug_node* const> views,
    std::span<const uint8_t> applies, bool begins_cycle) {
  FilterOutcome outcome = run_filter_chain(call, state, views, applies);
  tell_filters_ran(call, state, views, outcome, begins_cycle);
  return outcome;
}

CallPipeline::FilterWalk CallPipeline::run_filter_walk(
    Call& call, const PodCallState& state, std::span<const uint32_t> evaluate,
    size_t target) {
  const auto all = state.table.views();
  const size_t length = walk_length(evaluate, all.size());
  thread_local std::vector<const schedplug_node*> step_views, walked_views;
  FilterWalk walk;
  size_t done = 0, passed = 0;
  // The first step as if every node passed; each next one sized by the
  // share that passed so far, an eighth more and a few nodes over, so
  // that most walks take one or two steps.
  size_t next = std::min(length, target);
  for (bool first = true;; first = false) {
    const std::vector<uint32_t> step =
        walk_slice(evaluate, all.size(), done, next);
    size_t live = 0;
    for (size_t i = 0; i + 1 < step.size(); i += 2) {
      for (uint32_t slot = step[i]; slot < step[i + 1]; ++slot)
        live += all[slot] != nullptr;
    }
    FilterOutcome outcome =
        run_filter_chain(call, state, window_views(all, step, step_views), {});
    // A node is rejected at most once (by the first filter that did).
    passed += live - std::min(live, outcome.rejections.size());
    if (first) {
      walk.outcome = std::move(outcome);
    } else {
      merge_filter_outcome(walk.outcome, std::move(outcome));
    }
    done = next;
    if (passed >= target || done >= length || call.deadline.expired() ||
        !walk.outcome.unfinished.empty())
      break;
    const double share = static_cast<double>(std::max<size_t>(passed, 1)) /
                         static_cast<double>(done);
    const auto more = static_cast<size_t>(static_cast<double>(target - passed) /
                                          share * 1.125);
    next = std::min(length, done + more + 16);
  }
  walk.evaluated = walk_slice(evaluate, all.size(), 0, done);
  walk.views = window_views(all, walk.evaluated, walked_views);
  tell_filters_ran(call, state, walk.views, walk.outcome,
                   /*begins_cycle=*/true);
  return walk;
}

grpc::Status CallPipeline::pre_filter(CallContext& context,
                                      const v1::PreFilterRequest& request,
                                      v1::PreFilterResponse& response) {
  const PodCallPlan plan{.method = "PreFilter",
                         .recorded = v1::RECORDED_METHOD_PRE_FILTER,
                         .delta = &request.delta(),
                         .begins_cycle = true};
  return run_pod_call(
      plan, context, request, response,
      [&](const ProfilePlugins&) {
        return window_status(request.evaluate(), "PreFilter", false);
      },
      [&](Call& call, const PodCallState& state) {
        const NodeTable& table = state.table;
        response.set_table_version(table.version());
        // The shim also gets the gates (not_applying) in case the host
        // loses the cycle.
        report_gates(*state.cycle, *state.profile, response);
        // With `evaluate`, only its window (FilterNodes may ask about the
        // rest).
        response.set_windowed(!request.evaluate().empty());
        std::span<const schedplug_node* const> views;
        FilterOutcome outcome;
        if (request.feasible_target() > 0 && !request.evaluate().empty()) {
          // Only as far along the window as kube-scheduler's Filter is
          // expected to walk.
          FilterWalk walk =
              run_filter_walk(call, state, slots_of(request.evaluate()),
                              request.feasible_target());
          views = walk.views;
          outcome = std::move(walk.outcome);
          response.mutable_evaluated()->Add(walk.evaluated.begin(),
                                            walk.evaluated.end());
        } else {
          views = evaluated_views(table, request.evaluate());
          outcome =
              run_filter_step(call, state, views, {}, /*begins_cycle=*/true);
        }
        if (request.score_ahead())
          score_ahead(call, state, views, outcome, {}, response);
        fill_filter_response(call, *state.profile, outcome, response);
        if (spdlog::should_log(
                spdlog::level::debug)) {  // only finish() reads it
          const TableDelta& delta = state.delta;
          call.summary = fmt::format(
              "{} nodes{} (delta +{} -{}{}), {} rejected, table version {}",
              table.size(),
              response.evaluated_size() > 0
                  ? fmt::format(" ({} evaluated)",
                                walk_length({response.evaluated().data(),
                                             static_cast<size_t>(
                                                 response.evaluated_size())},
                                            table.views().size()))
              : response.windowed() ? std::string(" (windowed)")
                                    : std::string(),
              delta.upserts.size(), delta.removed.size(),
              delta.full ? ", full" : "", response.rejected_nodes_size(),
              table.version());
        }
        return grpc::Status::OK;
      });
}

void CallPipeline::fill_filter_response(Call& call,
                                        const ProfilePlugins& profile,
                                        FilterOutcome& outcome,
                                        v1::PreFilterResponse& response) {
  for (size_t i = 0; i < profile.filters.size(); ++i) {
    response.add_plugins(profile.filters[i]->name());
    response.add_skipped(outcome.skipped[i]);
  }
  const auto [reasons, names] =
      answer_unfinished(outcome.unfinished, *response.mutable_unfinished());
  note_unfinished(call, reasons, names, outcome.runs);
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

grpc::Status CallPipeline::filter_nodes(CallContext& context,
                                        const v1::FilterNodesRequest& request,
                                        v1::PreFilterResponse& response) {
  // The cycle PreFilter began, when the host still holds it: its per-pod
  // states, and it stays the session's (PreScore follows). Without it,
  // each plugin begins and ends the pod within this run, as for Filter,
  // with the shim's gates for plugins without pod_begin.
  const PodCallPlan plan{.method = "FilterNodes",
                         .recorded = v1::RECORDED_METHOD_FILTER_NODES,
                         .table_version = request.table_version()};
  return run_pod_call(
      plan, context, request, response,
      [&](const ProfilePlugins&) {
        return window_status(request.evaluate(), "FilterNodes", true);
      },
      [&](Call& call, const PodCallState& state) {
        const NodeTable& table = state.table;
        const ProfilePlugins& profile = *state.profile;
        response.set_table_version(table.version());
        if (state.cycle) report_gates(*state.cycle, profile, response);
        const std::vector<uint8_t> applies =
            known_applies(request, profile.filters);
        response.set_windowed(true);
        const auto views = evaluated_views(table, request.evaluate());
        FilterOutcome outcome = run_filter_step(call, state, views, applies,
                                                /*begins_cycle=*/false);
        if (request.score_ahead()) {
          score_ahead(call, state, views, outcome,
                      known_applies(request, profile.scorers), response);
        }
        fill_filter_response(call, profile, outcome, response);
        if (spdlog::should_log(
                spdlog::level::debug)) {  // only finish() reads it
          call.summary = fmt::format(
              "{} evaluate pairs on {} nodes, {} rejected, table version {}, "
              "{}",
              request.evaluate_size() / 2, table.size(),
              response.rejected_nodes_size(), table.version(),
              state.cycle ? "the cycle's pod states" : "no cycle held");
        }
        return grpc::Status::OK;
      });
}

grpc::Status CallPipeline::filter(CallContext& context,
                                  const v1::FilterRequest& request,
                                  v1::FilterResponse& response) {
  // The cycle's per-pod states, when PreFilter began this pod's cycle (and
  // the plugin set it began with); the node comes with the request.
  const PodCallPlan plan{.method = "Filter",
                         .recorded = v1::RECORDED_METHOD_FILTER,
                         .uses_table = false,
                         .node = &request.node().name()};
  NodeData node_data;
  return run_pod_call(
      plan, context, request, response,
      [&](const ProfilePlugins&) -> grpc::Status {
        if (request.node().name().empty()) {
          return {grpc::StatusCode::INVALID_ARGUMENT,
                  "Filter: the node has no name"};
        }
        try {
          node_data = node_from_proto(request.node());
        } catch (const FieldLimitError& e) {
          return field_limit_status(e);
        }
        return grpc::Status::OK;
      },
      [&](Call& call, const PodCallState& state) -> grpc::Status {
        const ProfilePlugins& profile = *state.profile;
        std::vector<const PluginInstance*> filters;
        if (request.plugins().empty()) filters = profile.filters;
        for (const std::string& name : request.plugins()) {
          const PluginInstance* plugin = profile.filter_named(name);
          if (plugin == nullptr) {
            std::string known;
            for (const PluginInstance* f : profile.filters) {
              known += (known.empty() ? "\"" : ", \"") + f->name() + "\"";
            }
            return {grpc::StatusCode::INVALID_ARGUMENT,
                    "unknown plugin \"" + name + "\": profile \"" +
                        profile.scheduler_name +
                        "\" has no native Filter plugin of that name (it "
                        "has " +
                        (known.empty() ? std::string("none") : known) + ")"};
          }
          filters.push_back(plugin);
        }
        std::vector<int> timeouts;
        for (const PluginInstance* f : filters) {
          int t = 0;
          for (size_t i = 0; i < profile.filters.size(); ++i) {
            if (profile.filters[i] == f && i < profile.filter_timeout_ms.size())
              t = profile.filter_timeout_ms[i];
          }
          timeouts.push_back(t);
        }
        const NodeModel node(std::move(node_data));
        const std::vector<Deadline> deadlines =
            plugin_deadlines(call, timeouts, Clock::now());
        const std::vector<uint8_t> applies = known_applies(request, filters);
        SingleFilterResult result = run_filters_on_node(
            filters, state.pod.view(), node.view(), call.deadline,
            {.plugin_deadlines = deadlines,
             .applies = applies,
             .keep_raw_scores = false,
             .cycle = state.cycle.get()});
        tell(&CallObserver::chain_ran, result.runs, std::string_view("filter"));
        const auto [reasons, names] = answer_unfinished(
            result.unfinished, *response.mutable_unfinished());
        note_unfinished(call, reasons, names, result.runs);
        response.set_code(static_cast<v1::Code>(result.verdict.code));
        if (result.plugin != nullptr)
          response.set_plugin(result.plugin->name());
        response.set_reason(result.verdict.reason);
        call.summary = result.plugin == nullptr
                           ? std::string("fits")
                           : "rejected by " + result.plugin->name();
        return grpc::Status::OK;
      });
}

}  // namespace schedplug::host
