#include "host/check/create_check.hpp"

#include <string>

#include "host/plugin/plugin_instance.hpp"

namespace schedplug::host {
namespace {

// A hint an instance declares that buys nothing: the hint is about a hook
// the plugin lacks, or the scheduler uses it only together with `needs`.
// Each row that holds is a warning, not an error: the config still works.
struct HintRule {
  uint64_t hint;
  const char* hint_name;
  bool (PluginLibrary::*has_hook)() const;
  const char* hook_name;
  uint64_t needs = 0;  // 0: the hook is all it needs
  const char* needs_name = nullptr;
  // Why the hint buys nothing without `needs`.
  const char* why = nullptr;
};

constexpr HintRule kHintRules[] = {
    {SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS,
     "SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS", &PluginLibrary::has_filter,
     "filter"},
    {SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY,
     "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY", &PluginLibrary::has_filter,
     "filter"},
    {SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS,
     "SCHEDPLUG_HINT_FILTER_READS_DECLARED_POD_KEYS",
     &PluginLibrary::has_filter, "filter",
     SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY,
     "SCHEDPLUG_HINT_FILTER_IGNORES_POD_IDENTITY",
     "the scheduler narrows a pod's batching signature (and, with "
     "SCHEDPLUG_HINT_FILTER_IGNORES_NODE_PODS as well, its kept verdicts) to "
     "the declared keys only for a filter that ignores the pod's name and "
     "uid"},
};

// "plugin "X" declares ...; remove ...", or "" when the rule does not hold.
std::string hint_warning(const HintRule& rule, const PluginInstance& plugin) {
  const uint64_t hints = plugin.settings().hints;
  if ((hints & rule.hint) == 0) return {};
  const std::string declares =
      "plugin \"" + plugin.name() + "\" declares " + rule.hint_name;
  if (!(plugin.library().*rule.has_hook)()) {
    return declares + " but has no " + rule.hook_name +
           " hook, so the hint buys nothing; remove it from the plugin's "
           "hints (its descriptor, or the settings its create() sets)";
  }
  if ((hints & rule.needs) != rule.needs) {
    return declares + " without " + rule.needs_name +
           ", so the hint buys nothing (" + rule.why + "); declare " +
           rule.needs_name + " too if the plugin keeps that promise, or " +
           "remove " + rule.hint_name;
  }
  return {};
}

}  // namespace

std::vector<Diagnostic> check_create(
    const SchedulerConfig& config, const std::vector<ResolvedProfile>& profiles,
    std::vector<CreatedPlugins::Created>* keep) {
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
      int line = source != nullptr ? source->line : 0;
      if (source != nullptr) {
        for (const auto& entry : source->plugin_config) {
          if (entry.name == plugin.library->name()) line = entry.line;
        }
      }
      const std::string where =
          file + (line > 0 ? ":" + std::to_string(line) : "") + ": profile \"" +
          profile.scheduler_name + "\": ";
      const auto kept = [&](std::shared_ptr<PluginInstance> instance,
                            bool shadow) {
        if (keep != nullptr) {
          keep->push_back({.profile = profile.scheduler_name,
                           .args_json = plugin.args_json,
                           .instance = std::move(instance),
                           .shadow = shadow});
        }
      };
      try {
        auto instance =
            PluginInstance::create(plugin.library, plugin.args_json);
        for (const HintRule& rule : kHintRules) {
          if (std::string w = hint_warning(rule, *instance); !w.empty())
            out.push_back({Severity::kWarning, where + w});
        }
        kept(std::move(instance), false);
      } catch (const CreateError& e) {
        out.push_back({Severity::kError, where + e.what()});
      }
      if (plugin.shadow != nullptr) {
        try {
          kept(PluginInstance::create(plugin.shadow, plugin.args_json), true);
        } catch (const CreateError& e) {
          out.push_back(
              {Severity::kError, where + "shadow candidate: " + e.what()});
        }
      }
    }
  }
  return out;
}

}  // namespace schedplug::host
