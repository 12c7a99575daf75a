#include "host/observers/observers.hpp"

namespace schedplug::host {
namespace {

// What a recording says about the plugin set that answers from now on.
v1::RecordedPluginSet recorded_plugin_set(const PluginGeneration& set,
                                          const HostIdentity& identity) {
  v1::RecordedPluginSet out;
  out.set_generation(set.generation);
  identity.to_proto(*out.mutable_identity());
  out.set_config(set.config_bytes);
  for (v1::PluginInfo& info : plugin_infos(set))
    *out.add_plugins() = std::move(info);
  return out;
}

}  // namespace

RecordObserver::RecordObserver(CycleRecorder& recorder,
                               const PluginGeneration& plugins,
                               const HostIdentity& identity)
    : recorder_(recorder) {
  recorder_.plugin_set(recorded_plugin_set(plugins, identity));
}

void RecordObserver::plugins_swapped(const PluginGeneration& plugins,
                                     const HostIdentity& identity) {
  recorder_.plugin_set(recorded_plugin_set(plugins, identity));
}

void RecordObserver::session_opened(const Session& session,
                                    const v1::HandshakeRequest& request) {
  recorder_.session_opened(session.id, request);
}

void RecordObserver::session_closed(const Session& session,
                                    const Session::Released&) {
  recorder_.session_closed(session.id);
}

void RecordObserver::call_ended(const CallEnded& c) {
  if (c.recorded == v1::RECORDED_METHOD_UNSPECIFIED) return;
  recorder_.call(c.recorded, *c.session_id, *c.request, *c.response, *c.status,
                 c.table_version, c.table_nodes, c.took, c.delta);
}

}  // namespace schedplug::host
