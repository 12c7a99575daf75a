// The typed-args functions of schedplug_host (plugin.h, v1.1) for one
// create() call: C plugins read their args through these instead of parsing
// JSON. The functions and the session are the SDK's
// (schedplug/runtime.hpp), shared with the test kit, and use the SDK's own
// schedplug::Args, so the rules and messages are exactly those of the C++
// layer.
#pragma once

#include <string>

#include "schedplug/runtime.hpp"

namespace schedplug::host {

// Owns everything the arg functions hand out during one create().
class ArgsSession : public runtime::ArgsSession {
 public:
  using runtime::ArgsSession::ArgsSession;

  // Sets the arg functions in `host`, and `host.args` to the session's
  // root (NULL without a session). The functions find the session through
  // host.context, a PluginInstance (PluginInstance::args_session()).
  static void install(schedplug_host& host, const ArgsSession* session);
};

}  // namespace schedplug::host
