// The typed-args functions of schedplug_host (plugin.h, v1.1) for one
// create() call: C plugins read their args through these instead of parsing
// JSON. They use the SDK's own schedplug::Args, so the rules and messages
// are exactly those of the C++ layer.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "schedplug/cpp/args.hpp"
#include "schedplug/plugin.h"

namespace schedplug::host {

// Owns everything the arg functions hand out during one create(): nested
// objects and strings stay valid until this object is destroyed.
class ArgsSession {
 public:
  // `args_json` is the plugin's args object. When it is not valid JSON or
  // not an object, root() is NULL and every getter reports why.
  explicit ArgsSession(const std::string& args_json);

  const schedplug_args* root() const;

  // Sets the arg functions in `host`, and `host.args` to the session's
  // root (NULL without a session). The functions find the session through
  // host.context, a PluginInstance (PluginInstance::args_session()).
  static void install(schedplug_host& host, const ArgsSession* session);

  // Storage the getters hand out.
  const schedplug_args* keep(Args object);
  const std::string& keep(std::string text);
  const std::vector<schedplug_str>& keep(std::vector<schedplug_str> list);
  const std::string& parse_error() const { return parse_error_; }

 private:
  std::deque<Args> objects_;
  std::deque<std::string> strings_;
  std::deque<std::vector<schedplug_str>> lists_;
  std::string parse_error_;
};

}  // namespace schedplug::host
