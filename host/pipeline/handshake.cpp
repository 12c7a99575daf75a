// The Handshake: the scheduler's plugins and settings checked against the
// host's, a new session, and what the host tells the shim about each
// plugin.
#include <set>
#include <string>

#include <spdlog/spdlog.h>

#include "host/identity/config_skew.hpp"
#include "host/identity/handshake_check.hpp"
#include "host/pipeline/pod_call.hpp"

namespace schedplug::host {

using namespace call_support;

grpc::Status CallPipeline::handshake(const v1::HandshakeRequest& request_in,
                                     v1::HandshakeResponse& response_out,
                                     const std::string& peer) {
  const v1::HandshakeRequest* request = &request_in;
  v1::HandshakeResponse* response = &response_out;
  Call call("Handshake", nullptr);
  call.plugins = plugins();
  const PluginGeneration& plugins = *call.plugins;
  call.what = "client \"" + request->client_id() + "\"";
  if (request->protocol_version() != v1::PROTOCOL_VERSION_1) {
    tell(&CallObserver::handshake_refused,
         std::string_view("protocol_version"));
    return finish(call,
                  {grpc::StatusCode::INVALID_ARGUMENT,
                   fmt::format("unsupported protocol version {}: this "
                               "host speaks version 1 "
                               "(PROTOCOL_VERSION_1); use a shim and "
                               "host from the same schedplug release",
                               static_cast<int>(request->protocol_version()))});
  }
  HandshakeFindings findings = check_handshake(
      *request, *plugins.created, plugins.libraries, context_.config_file);
  if (!findings.errors.empty()) {
    std::string message = fmt::format(
        "handshake refused: the scheduler's plugins do not match the host's "
        "({} problem{}):",
        findings.errors.size(), findings.errors.size() == 1 ? "" : "s");
    for (const std::string& e : findings.errors) message += "\n  error: " + e;
    tell(&CallObserver::handshake_refused, std::string_view("plugin_names"));
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT, message});
  }
  SkewFindings skew =
      check_config_skew(*request, plugins.resolved, context_.config_file);
  if (!skew.errors.empty() && plugins.generation > 1) {
    // A reload changed plugin args since kube-scheduler read the file: its
    // settings are still the ones the host started with, and that is no
    // skew (the host runs the native plugins with the new args).
    SkewFindings at_start =
        check_config_skew(*request, startup_resolved_, context_.config_file);
    if (at_start.errors.empty()) {
      spdlog::info(
          "Handshake {}: kube-scheduler's plugin settings are the ones the "
          "host started with; the host has reloaded its configuration since "
          "and runs the native plugins with the new args",
          call.what);
      skew = std::move(at_start);
    }
  }
  if (!skew.unchecked_profiles.empty()) {
    std::string profiles;
    for (const std::string& p : skew.unchecked_profiles) {
      profiles += (profiles.empty() ? "\"" : ", \"") + p + "\"";
    }
    spdlog::info(
        "Handshake {}: the scheduler sent no plugin settings for profile{} "
        "{} (a shim older than the config-skew check); their weights, "
        "policies and args are not compared",
        call.what, skew.unchecked_profiles.size() == 1 ? "" : "s", profiles);
  }
  if (!skew.errors.empty()) {
    std::string message = fmt::format(
        "handshake refused: kube-scheduler and schedplug-host read different "
        "KubeSchedulerConfigurations ({} difference{}):",
        skew.errors.size(), skew.errors.size() == 1 ? "" : "s");
    for (const std::string& e : skew.errors) message += "\n  error: " + e;
    tell(&CallObserver::handshake_refused, std::string_view("config_skew"));
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT, message});
  }
  auto session = sessions_.create(request->client_id(), peer);
  for (const v1::ProfilePlugins& p : request->profiles())
    session->profiles.push_back(p.scheduler_name());
  tell(&CallObserver::session_opened, *session, *request);
  response->set_protocol_version(v1::PROTOCOL_VERSION_1);
  response->set_session_id(session->id);
  response->set_fast_path_socket(context_.fast_path_socket);
  response->set_pre_score_delta(true);
  response->set_scores_ahead(true);
  response->set_cycle_notes(true);
  response->set_fast_hooks(true);
  response->set_feasible_target(true);
  identity_of(call).to_proto(*response->mutable_identity());
  for (v1::PluginInfo& info : plugin_infos(plugins)) {
    response->set_data(response->data() | info.data());
    *response->add_plugins() = std::move(info);
  }
  for (const std::string& w : plugins.warnings) response->add_warnings(w);
  for (const std::string& w : findings.warnings) {
    spdlog::warn("handshake of {}: {}", request->client_id(), w);
    response->add_warnings(w);
  }
  spdlog::info("session {} started for client \"{}\" ({}, {} profiles)",
               session->id, request->client_id(),
               peer.empty() ? "in-process" : peer, request->profiles_size());
  call.summary = "session " + session->id;
  return finish(call, grpc::Status::OK);
}

}  // namespace schedplug::host
