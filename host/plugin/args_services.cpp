#include "host/plugin/args_services.hpp"

#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {
namespace {

runtime::ArgsSession* session_of(void* context) {
  return static_cast<PluginInstance*>(context)->args_session();
}

}  // namespace

void ArgsSession::install(schedplug_host& host, const ArgsSession* session) {
  runtime::ArgsSession::install<&session_of>(host, session);
}

}  // namespace schedplug::host
