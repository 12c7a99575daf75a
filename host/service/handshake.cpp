// HostService::Handshake: the scheduler's plugins and settings checked
// against the host's, a new session, and what the host tells the shim
// about each plugin.
#include <set>
#include <string>

#include <spdlog/spdlog.h>

#include "host/service/call_support.hpp"
#include "host/service/config_skew.hpp"
#include "host/service/handshake_check.hpp"

namespace schedplug::host {

using namespace call_support;

grpc::Status HostService::Handshake(grpc::ServerContext* context,
                                    const v1::HandshakeRequest* request,
                                    v1::HandshakeResponse* response) {
  Call call("Handshake", nullptr);
  call.what = "client \"" + request->client_id() + "\"";
  if (request->protocol_version() != v1::PROTOCOL_VERSION_1) {
    if (context_.metrics) {
      context_.metrics->handshake_refused("protocol_version");
    }
    return finish(call,
                  {grpc::StatusCode::INVALID_ARGUMENT,
                   fmt::format("unsupported protocol version {}: this "
                               "host speaks version 1 "
                               "(PROTOCOL_VERSION_1); use a shim and "
                               "host from the same schedplug release",
                               static_cast<int>(request->protocol_version()))});
  }
  HandshakeFindings findings = check_handshake(
      *request, *context_.created, context_.libraries, context_.config_file);
  if (!findings.errors.empty()) {
    std::string message = fmt::format(
        "handshake refused: the scheduler's plugins do not match the host's "
        "({} problem{}):",
        findings.errors.size(), findings.errors.size() == 1 ? "" : "s");
    for (const std::string& e : findings.errors) message += "\n  error: " + e;
    if (context_.metrics) context_.metrics->handshake_refused("plugin_names");
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT, message});
  }
  const SkewFindings skew =
      check_config_skew(*request, context_.resolved, context_.config_file);
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
    if (context_.metrics) context_.metrics->handshake_refused("config_skew");
    return finish(call, {grpc::StatusCode::INVALID_ARGUMENT, message});
  }
  const std::string peer = context_.peers != nullptr
                               ? context_.peers->identify(*context)
                               : std::string();
  auto session = sessions_.create(request->client_id(), peer);
  response->set_protocol_version(v1::PROTOCOL_VERSION_1);
  response->set_session_id(session->id);
  response->set_fast_path_socket(context_.fast_path_socket);
  response->set_pre_score_delta(true);
  identity_.to_proto(*response->mutable_identity());
  for (const auto& lib : context_.libraries) {
    v1::PluginInfo* info = response->add_plugins();
    info->set_name(lib->name());
    info->set_version(lib->version());
    info->set_file(lib->file().string());
    info->set_sha256(lib->sha256());
    info->set_has_filter(lib->has_filter());
    info->set_has_score(lib->has_score());
    // One pass over the plugin's instances (create() may set each of these
    // from its args):
    //  - events: the union, 0 (every event) when any instance asks for
    //    every event; no instance (enabled nowhere): the descriptor's;
    //  - data, the pod and node data they read (plugin.h v1.2): the union;
    //  - hints are promises (plugin.h v1.3): only what every instance
    //    promised;
    //  - the keys of SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS (plugin.h
    //    v1.4): the union, sorted.
    uint64_t events = 0, data = 0, hints = ~uint64_t{0};
    bool every_event = false, enabled = false;
    std::set<std::string> label_keys, annotation_keys;
    for (const auto& profile : context_.created->profiles()) {
      for (const PluginInstance* p : profile.plugins) {
        if (&p->library() != lib.get()) continue;
        const schedplug_settings& settings = p->settings();
        enabled = true;
        every_event = every_event || settings.events == 0;
        events |= settings.events;
        data |= settings.data;
        hints &= settings.hints;
        label_keys.insert(p->pod_keys().labels().begin(),
                          p->pod_keys().labels().end());
        annotation_keys.insert(p->pod_keys().annotations().begin(),
                               p->pod_keys().annotations().end());
      }
    }
    info->set_events(!enabled      ? lib->descriptor().events
                     : every_event ? 0
                                   : events);
    info->set_data(data);
    response->set_data(response->data() | data);
    info->set_hints(enabled ? hints : 0);
    for (const std::string& k : label_keys) info->add_pod_label_keys(k);
    for (const std::string& k : annotation_keys) {
      info->add_pod_annotation_keys(k);
    }
  }
  for (const std::string& w : context_.startup_warnings)
    response->add_warnings(w);
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
