// Fuzz target "config": the KubeSchedulerConfiguration path of
// `schedplug check` and of the host's start-up (host/config, host/check).
//
// The input is the YAML file. parse_scheduler_config either returns a
// config or throws ConfigError (any other exception escaping is a bug: the
// user would see a library's message instead of a sentence naming the file
// and line). A parsed config then goes through check_names, resolve_profiles
// (the per-plugin `schedplug` args key, durations, weights) and check_create
// (args as JSON into a real plugin's create()) with one loaded plugin, the
// fixture "FuzzFixture" (fixture/), so native-plugin paths are reached.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_checks.hpp"
#include "host/check/create_check.hpp"
#include "host/check/name_check.hpp"
#include "host/config/resolve.hpp"
#include "host/config/scheduler_config.hpp"
#include "host/loader/plugin_library.hpp"

namespace host = schedplug::host;

namespace {

std::vector<std::shared_ptr<host::PluginLibrary>>& plugins() {
  static std::vector<std::shared_ptr<host::PluginLibrary>> loaded = [] {
    std::vector<std::shared_ptr<host::PluginLibrary>> out;
    out.push_back(host::load_plugin_file(SCHEDPLUG_FUZZ_FIXTURE));
    return out;
  }();
  return loaded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  host::SchedulerConfig config;
  try {
    config = host::parse_scheduler_config(yaml, "fuzz.yaml");
  } catch (const host::ConfigError& e) {
    SCHEDPLUG_FUZZ_CHECK(std::string_view(e.what()).starts_with("fuzz.yaml"),
                         std::string("a config error that does not name the "
                                     "file: ") +
                             e.what());
    return 0;
  }
  for (const host::Profile& profile : config.profiles) {
    SCHEDPLUG_FUZZ_CHECK(!profile.scheduler_name.empty(), "empty profile name");
    for (const host::PluginConfigEntry& entry : profile.plugin_config) {
      const auto args = nlohmann::json::parse(entry.args_json, nullptr, false);
      SCHEDPLUG_FUZZ_CHECK(args.is_object(),
                           "pluginConfig args of " + entry.name +
                               " are not a JSON object: " + entry.args_json);
    }
  }
  for (const host::Diagnostic& d : host::check_names(config, plugins())) {
    SCHEDPLUG_FUZZ_CHECK(!d.message.empty(), "a diagnostic without a message");
  }
  std::vector<host::ResolvedProfile> resolved;
  try {
    resolved = host::resolve_profiles(config, plugins());
  } catch (const host::ConfigError& e) {
    SCHEDPLUG_FUZZ_CHECK(std::string_view(e.what()).starts_with("fuzz.yaml"),
                         std::string("a config error that does not name the "
                                     "file: ") +
                             e.what());
    return 0;
  }
  for (const host::ResolvedProfile& p : resolved) {
    for (const host::ResolvedPlugin& plugin : p.plugins) {
      const auto args = nlohmann::json::parse(plugin.args_json, nullptr, false);
      SCHEDPLUG_FUZZ_CHECK(args.is_object() && !args.contains("schedplug"),
                           "args handed to create(): " + plugin.args_json);
      SCHEDPLUG_FUZZ_CHECK(plugin.settings.failure_policy == "Fail" ||
                               plugin.settings.failure_policy == "Ignore",
                           "failure policy " + plugin.settings.failure_policy);
      SCHEDPLUG_FUZZ_CHECK(plugin.settings.timeout_ms >= 0, "timeout");
    }
  }
  for (const host::Diagnostic& d : host::check_create(config, resolved)) {
    SCHEDPLUG_FUZZ_CHECK(!d.message.empty(), "a diagnostic without a message");
  }
  return 0;
}
