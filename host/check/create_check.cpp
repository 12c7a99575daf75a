#include "host/check/create_check.hpp"

#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {

std::vector<Diagnostic> check_create(
    const SchedulerConfig& config,
    const std::vector<ResolvedProfile>& profiles) {
  std::vector<Diagnostic> out;
  const std::string file =
      config.file.empty() ? "<config>" : config.file.string();
  for (const auto& profile : profiles) {
    // Point at the plugin's pluginConfig entry, or else at the profile.
    const Profile* source = nullptr;
    for (const auto& p : config.profiles) {
      if (p.scheduler_name == profile.scheduler_name) source = &p;
    }
    for (const auto& plugin : profile.plugins) {
      try {
        PluginInstance::create(plugin.library, plugin.args_json);
      } catch (const CreateError& e) {
        int line = source != nullptr ? source->line : 0;
        if (source != nullptr) {
          for (const auto& entry : source->plugin_config) {
            if (entry.name == plugin.library->name()) line = entry.line;
          }
        }
        out.push_back({Severity::kError,
                       file + (line > 0 ? ":" + std::to_string(line) : "") +
                           ": profile \"" + profile.scheduler_name +
                           "\": " + e.what()});
      }
    }
  }
  return out;
}

}  // namespace schedplug::host
