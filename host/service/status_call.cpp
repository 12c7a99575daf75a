// Status: the plugin builds the host serves, the shadow candidates it runs
// beside them, and the hot-reload changes it refused that still stand
// (`schedplug-host probe --details`).
#include <chrono>

#include "host/service/call_support.hpp"
#include "host/service/host_service.hpp"
#include "host/shadow/candidates.hpp"

namespace schedplug::host {

using namespace call_support;

namespace {

int64_t unix_nanos(std::chrono::system_clock::time_point t) {
  if (t == std::chrono::system_clock::time_point{}) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             t.time_since_epoch())
      .count();
}

}  // namespace

grpc::Status HostService::Status(grpc::ServerContext* context,
                                 const v1::StatusRequest*,
                                 v1::StatusResponse* response) {
  GrpcCallContext call_context(context);
  Call call("Status", &call_context);
  call.plugins = plugins();
  identity_of(call).to_proto(*response->mutable_identity());
  response->set_plugin_set_generation(call.plugins->generation);
  for (const auto& lib : call.plugins->libraries) {
    v1::PluginBuild* build = response->add_plugins();
    build->set_plugin(lib->name());
    build->set_version(lib->version());
    build->set_file(lib->file().filename().string());
    build->set_sha256(lib->sha256());
  }
  for (const ShadowBuild& b : shadow_builds(call.plugins->resolved)) {
    v1::PluginBuild* build = response->add_shadows();
    build->set_plugin(b.plugin);
    build->set_version(b.version);
    build->set_file(b.file);
    build->set_sha256(b.sha256);
  }
  const ReloadStatus::Snapshot reloads = reload_status_.snapshot();
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
  return finish(call, grpc::Status::OK);
}

}  // namespace schedplug::host
