// Explain, and what PreFilter, FilterNodes and PreScore add to the record
// of recent cycles it answers from (host/explain/recent_cycles.hpp).
#include <chrono>
#include <string>

#include <spdlog/spdlog.h>

#include "host/service/call_support.hpp"
#include "host/service/host_service.hpp"

namespace schedplug::host {

using namespace call_support;

namespace {

std::string_view str(const schedplug_str& s) {
  return s.len == 0 ? std::string_view() : std::string_view(s.data, s.len);
}

// The part of a record every call starts with: the pod and its profile.
CycleRecord part_for(const std::string& scheduler_name, const v1::Pod& pod,
                     const NodeTable& table) {
  CycleRecord part;
  part.scheduler_name = scheduler_name;
  part.pod_namespace = pod.namespace_();
  part.pod_name = pod.name();
  part.pod_uid = pod.uid();
  part.started_unix_nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  part.table_version = table.version();
  return part;
}

void add_timings(const ChainRuns& runs, CycleRecord& part) {
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

void HostService::store(const Session& session, bool starts, CycleRecord part) {
  const RecentCycles::Stats held =
      recent_.record(session.id, starts, std::move(part));
  if (context_.metrics) {
    context_.metrics->recent_cycles(held.cycles, held.bytes, held.dropped_count,
                                    held.dropped_memory);
  }
}

void HostService::record_filters(const Session& session,
                                 const ProfilePlugins& profile,
                                 const v1::Pod& pod, const NodeTable& table,
                                 const FilterOutcome& outcome, size_t filtered,
                                 bool starts) {
  if (!recent_.enabled()) return;
  CycleRecord part = part_for(profile.scheduler_name, pod, table);
  for (size_t i = 0; i < profile.filters.size(); ++i) {
    part.filters.push_back(profile.filters[i]->name());
    part.filter_skipped.push_back(i < outcome.skipped.size() &&
                                  outcome.skipped[i]);
  }
  part.nodes_filtered = static_cast<uint32_t>(filtered);
  part.reasons = outcome.reasons;
  part.rejections.reserve(outcome.rejections.size());
  for (const FilterRejection& r : outcome.rejections) {
    const CompactNode* node = table.at(r.node);
    part.rejections.push_back(
        {.node = part.add_name(node ? str(node->view().name) : ""),
         .reason = r.reason,
         .plugin = static_cast<uint16_t>(r.plugin),
         .code = static_cast<uint8_t>(r.code)});
  }
  add_timings(outcome.runs, part);
  for (const UnfinishedPlugin& u : outcome.unfinished)
    part.unfinished.push_back(u.reason);
  store(session, starts, std::move(part));
}

void HostService::record_scores(const Session& session,
                                const ProfilePlugins& profile,
                                const v1::Pod& pod, const NodeTable& table,
                                std::span<const schedplug_node* const> nodes,
                                const ScoreOutcome& outcome, bool starts) {
  if (!recent_.enabled()) return;
  CycleRecord part = part_for(profile.scheduler_name, pod, table);
  const auto weights = score_weights_.find(profile.scheduler_name);
  const size_t scorers = profile.scorers.size();
  for (size_t p = 0; p < scorers; ++p) {
    const PluginScoreOutcome& o = outcome.plugins[p];
    part.scorers.push_back(profile.scorers[p]->name());
    part.scorer_skipped.push_back(o.skipped);
    part.weights.push_back(weights != score_weights_.end() &&
                                   p < weights->second.size()
                               ? weights->second[p]
                               : 1);
    part.scorer_errors.push_back(!o.error.empty() ? o.error : o.unfinished);
  }
  part.scored.reserve(nodes.size());
  part.raw.resize(nodes.size() * scorers, 0);
  part.normalized.resize(nodes.size() * scorers, 0);
  for (size_t k = 0; k < nodes.size(); ++k) {
    part.scored.push_back(part.add_name(str(nodes[k]->name)));
  }
  for (size_t p = 0; p < scorers; ++p) {
    const PluginScoreOutcome& o = outcome.plugins[p];
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (k < o.raw.size()) part.raw[k * scorers + p] = o.raw[k];
      if (k < o.scores.size()) part.normalized[k * scorers + p] = o.scores[k];
    }
  }
  add_timings(outcome.runs, part);
  store(session, starts, std::move(part));
}

grpc::Status HostService::Explain(grpc::ServerContext* context,
                                  const v1::ExplainRequest* request,
                                  v1::ExplainResponse* response) {
  GrpcCallContext call_context(context);
  Call call("Explain", &call_context);
  call.what = "pod \"" + clipped(request->pod()) + "\"";
  if (request->pod().empty()) {
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT,
                         "Explain: no pod named; give namespace/name or the "
                         "pod's uid"});
  }
  identity_.to_proto(*response->mutable_identity());
  const RecentCyclesOptions& caps = recent_.options();
  if (!recent_.enabled()) {
    response->set_not_held(
        "this host keeps no scheduling cycles: it was started with "
        "--explain-cycles 0; restart it with a positive count to use "
        "`schedplug explain`");
    return finish(call, grpc::Status::OK);
  }
  RecentCycles::Found found = recent_.find(request->pod());
  for (v1::ExplainedCycle& c : found.cycles)
    *response->add_cycles() = std::move(c);
  if (response->cycles().empty()) {
    if (found.dropped_by == "count") {
      response->set_not_held(fmt::format(
          "the host no longer holds a cycle of pod \"{}\": it keeps the "
          "latest {} cycles (--explain-cycles) and newer ones replaced this "
          "pod's; ask sooner, or raise --explain-cycles",
          request->pod(), caps.max_cycles));
    } else if (found.dropped_by == "memory") {
      response->set_not_held(fmt::format(
          "the host no longer holds a cycle of pod \"{}\": its record of "
          "cycles is bounded to {} (--explain-memory) and newer cycles "
          "replaced this pod's; ask sooner, or raise --explain-memory",
          request->pod(), human_bytes(caps.max_bytes)));
    } else {
      response->set_not_held(fmt::format(
          "the host holds no cycle of pod \"{}\": none of its native plugins "
          "ran for a pod of that namespace/name or uid since it started. "
          "Check the name, that the pod's schedulerName is a profile with "
          "native plugins, and that this is the host its scheduler calls",
          request->pod()));
    }
  }
  call.summary = fmt::format("{} cycles", response->cycles_size());
  return finish(call, grpc::Status::OK);
}

}  // namespace schedplug::host
