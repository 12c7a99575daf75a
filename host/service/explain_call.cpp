// Explain, and what PreFilter, FilterNodes, PreScore and NoteCycles add to
// the record of recent cycles it answers from
// (host/explain/recent_cycles.hpp).
#include <chrono>
#include <string>

#include <spdlog/spdlog.h>

#include "host/explain/cycle_parts.hpp"
#include "host/service/call_support.hpp"
#include "host/service/host_service.hpp"

namespace schedplug::host {

using namespace call_support;

void HostService::store(const Session& session, bool starts, CycleRecord part) {
  const RecentCycles::Stats held =
      recent_.record(session.id, starts, std::move(part));
  if (context_.metrics) {
    context_.metrics->recent_cycles(held.cycles, held.bytes, held.dropped_count,
                                    held.dropped_memory);
  }
}

void HostService::record_filters(const Call&, const Session& session,
                                 const ProfilePlugins& profile,
                                 const v1::Pod& pod, const NodeTable& table,
                                 const FilterOutcome& outcome, size_t filtered,
                                 bool starts) {
  if (!recent_.enabled()) return;
  store(session, starts, filter_part(profile, pod, table, outcome, filtered));
}

void HostService::record_scores(const Call& call, const Session& session,
                                const ProfilePlugins& profile,
                                const v1::Pod& pod, const NodeTable& table,
                                std::span<const schedplug_node* const> nodes,
                                const ScoreOutcome& outcome, bool starts,
                                bool ahead) {
  if (!recent_.enabled()) return;
  static const std::vector<int> kNoWeights;
  const auto& all = call.plugins->score_weights;
  const auto weights = all.find(profile.scheduler_name);
  CycleRecord part =
      score_part(profile, weights == all.end() ? kNoWeights : weights->second,
                 pod, table, nodes, outcome);
  if (ahead) mark_ahead(profile, outcome, part);
  store(session, starts, std::move(part));
}

void HostService::record_placement(const v1::Placement& p) {
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

grpc::Status HostService::NoteCycles(grpc::ServerContext* context,
                                     const v1::CycleNotes* request,
                                     v1::CycleNotesResponse* response) {
  if (grpc::Status s = refuse_read_only(*context, "NoteCycles"); !s.ok())
    return s;
  GrpcCallContext call_context(context);
  return note_cycles(call_context, *request, *response);
}

grpc::Status HostService::note_cycles(CallContext& context,
                                      const v1::CycleNotes& request,
                                      v1::CycleNotesResponse& response) {
  Call call("NoteCycles", &context);
  call.what = "session " + clipped(request.session_id());
  // Only a session's scheduler says what became of its cycles.
  std::shared_ptr<Session> session;
  if (auto s = find_session(request.session_id(), session); !s.ok())
    return finish(call, s);
  record_placements(request);
  identity().to_proto(*response.mutable_identity());
  call.summary = fmt::format("{} notes", request.placed_size());
  return finish(call, grpc::Status::OK);
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
  identity().to_proto(*response->mutable_identity());
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
