#include "host/check/create_check.hpp"

#include "host/runtime/plugin_instance.hpp"

namespace schedplug::host {

std::vector<Diagnostic> check_create(
    const SchedulerConfig& config,
    const std::vector<ResolvedProfile>& profiles) {
  std::vector<Diagnostic> out;
  const std::string file =
      config.file.empty() ? "<config>" : config.file.string();
  for (const auto& profile : profiles) {
    for (const auto& plugin : profile.plugins) {
      try {
        PluginInstance::create(plugin.library, plugin.args_json);
      } catch (const CreateError& e) {
        out.push_back({Severity::kError, file + ": profile \"" +
                                             profile.scheduler_name +
                                             "\": " + e.what()});
      }
    }
  }
  return out;
}

}  // namespace schedplug::host
