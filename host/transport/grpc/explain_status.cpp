// Explain (from the recent cycles, host/explain/) and Status
// (the plugin builds the host serves, the shadow candidates it runs beside
// them, and the hot-reload changes it refused that still stand:
// `schedplug-host probe --details`).
#include <chrono>

#include <fmt/format.h>

#include "host/pipeline/call_text.hpp"
#include "host/shadow/candidates.hpp"
#include "host/transport/grpc/host_service.hpp"

namespace schedplug::host {

using namespace call_support;

namespace {

int64_t unix_nanos(std::chrono::system_clock::time_point t) {
  if (t == std::chrono::system_clock::time_point{}) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             t.time_since_epoch())
      .count();
}

// The answer when the host holds no cycle of `pod`, saying why.
std::string not_held(const RecentCycles& recent, const std::string& pod,
                     const std::string& dropped_by) {
  const RecentCyclesOptions& caps = recent.options();
  if (dropped_by == "count") {
    return fmt::format(
        "the host no longer holds a cycle of pod \"{}\": it keeps the "
        "latest {} cycles (--explain-cycles) and newer ones replaced this "
        "pod's; ask sooner, or raise --explain-cycles",
        pod, caps.max_cycles);
  }
  if (dropped_by == "memory") {
    return fmt::format(
        "the host no longer holds a cycle of pod \"{}\": the cycles it "
        "keeps are bounded to {} (--explain-memory) and newer cycles "
        "replaced this pod's; ask sooner, or raise --explain-memory",
        pod, human_bytes(caps.max_bytes));
  }
  return fmt::format(
      "the host holds no cycle of pod \"{}\": none of its native plugins "
      "ran for a pod of that namespace/name or uid since it started. "
      "Check the name, that the pod's schedulerName is a profile with "
      "native plugins, and that this is the host its scheduler calls",
      pod);
}

}  // namespace

grpc::Status HostService::Explain(grpc::ServerContext* context,
                                  const v1::ExplainRequest* request,
                                  v1::ExplainResponse* response) {
  GrpcCallContext call_context(context);
  return pipeline_.answer(
      "Explain", call_context, "pod \"" + clipped(request->pod()) + "\"",
      [&](std::string& summary) -> grpc::Status {
        if (request->pod().empty()) {
          return {grpc::StatusCode::INVALID_ARGUMENT,
                  "Explain: no pod named; give namespace/name or the pod's "
                  "uid"};
        }
        pipeline_.identity().to_proto(*response->mutable_identity());
        const RecentCycles& recent = *context_.recent_cycles;
        if (!recent.enabled()) {
          response->set_not_held(
              "this host keeps no scheduling cycles: it was started with "
              "--explain-cycles 0; restart it with a positive count to use "
              "`schedplug explain`");
          return grpc::Status::OK;
        }
        RecentCycles::Found found = recent.find(request->pod());
        for (v1::ExplainedCycle& c : found.cycles)
          *response->add_cycles() = std::move(c);
        if (response->cycles().empty())
          response->set_not_held(
              not_held(recent, request->pod(), found.dropped_by));
        summary = fmt::format("{} cycles", response->cycles_size());
        return grpc::Status::OK;
      });
}

grpc::Status HostService::Status(grpc::ServerContext* context,
                                 const v1::StatusRequest*,
                                 v1::StatusResponse* response) {
  GrpcCallContext call_context(context);
  return pipeline_.answer(
      "Status", call_context, "", [&](std::string&) -> grpc::Status {
        const auto plugins = pipeline_.plugins();
        HostIdentity{.epoch = pipeline_.identity().epoch,
                     .build = plugins->build}
            .to_proto(*response->mutable_identity());
        response->set_plugin_set_generation(plugins->generation);
        for (const auto& lib : plugins->libraries) {
          v1::PluginBuild* build = response->add_plugins();
          build->set_plugin(lib->name());
          build->set_version(lib->version());
          build->set_file(lib->file().filename().string());
          build->set_sha256(lib->sha256());
        }
        for (const ShadowBuild& b : shadow_builds(plugins->resolved)) {
          v1::PluginBuild* build = response->add_shadows();
          build->set_plugin(b.plugin);
          build->set_version(b.version);
          build->set_file(b.file);
          build->set_sha256(b.sha256);
        }
        const ReloadStatus::Snapshot reloads =
            context_.reload_status->snapshot();
        response->set_watching(reloads.watching);
        response->set_reloads(reloads.reloads);
        response->set_last_reload_unix_nanos(unix_nanos(reloads.last_reload));
        for (const ReloadRefusal& r : reloads.standing) {
          v1::RefusedChange* refused = response->add_refused();
          refused->set_file(r.file);
          refused->set_reason(r.reason);
          refused->set_message(r.message);
          refused->set_unix_nanos(unix_nanos(r.since));
        }
        return grpc::Status::OK;
      });
}

}  // namespace schedplug::host
