#include "host/plugin/created_plugins.hpp"

namespace schedplug::host {

const PluginInstance* ProfilePlugins::filter_named(
    std::string_view name) const {
  for (const PluginInstance* p : filters) {
    if (p->name() == name) return p;
  }
  return nullptr;
}

const PluginInstance* ProfilePlugins::plugin_named(
    std::string_view name) const {
  for (const PluginInstance* p : plugins) {
    if (p->name() == name) return p;
  }
  return nullptr;
}

std::unique_ptr<CreatedPlugins> CreatedPlugins::create(
    const std::vector<ResolvedProfile>& profiles,
    const CreatedPlugins* previous) {
  std::unique_ptr<CreatedPlugins> set(new CreatedPlugins());
  set->profiles_.reserve(profiles.size());
  for (const ResolvedProfile& profile : profiles) {
    ProfilePlugins out;
    out.scheduler_name = profile.scheduler_name;
    std::unordered_map<std::string, PluginInstance*> by_name;
    // An instance of `library` with `plugin`'s args: taken over from
    // `previous` when it has one, else created.
    const auto instance_of_library =
        [&](const std::shared_ptr<PluginLibrary>& library,
            const ResolvedPlugin& plugin, bool shadow) -> PluginInstance* {
      Created created;
      created.profile = profile.scheduler_name;
      created.args_json = plugin.args_json;
      created.shadow = shadow;
      if (previous != nullptr) {
        for (const Created& old : previous->instances_) {
          if (old.profile == profile.scheduler_name &&
              &old.instance->library() == library.get() &&
              old.args_json == plugin.args_json) {
            created.instance = old.instance;
            created.taken_over = true;
            break;
          }
        }
      }
      if (created.instance == nullptr) {
        try {
          created.instance = PluginInstance::create(library, plugin.args_json);
        } catch (const CreateError& e) {
          throw CreateError("profile \"" + profile.scheduler_name + "\": " +
                            (shadow ? "shadow candidate: " : "") + e.what());
        }
      }
      PluginInstance* raw = created.instance.get();
      set->instances_.push_back(std::move(created));
      return raw;
    };
    const auto add = [&](const ResolvedPlugin& plugin) -> PluginInstance* {
      PluginInstance* raw = instance_of_library(plugin.library, plugin, false);
      by_name[raw->name()] = raw;
      out.plugins.push_back(raw);
      out.plugin_timeout_ms.push_back(plugin.settings.timeout_ms);
      return raw;
    };
    std::unordered_map<std::string, const PluginInstance*> shadow_by_name;
    const auto shadow_of =
        [&](const ResolvedPlugin& plugin) -> const PluginInstance* {
      if (plugin.shadow == nullptr) return nullptr;
      auto it = shadow_by_name.find(plugin.library->name());
      if (it != shadow_by_name.end()) return it->second;
      const PluginInstance* raw =
          instance_of_library(plugin.shadow, plugin, true);
      shadow_by_name[plugin.library->name()] = raw;
      return raw;
    };
    for (const ResolvedPlugin& plugin : profile.plugins) add(plugin);
    auto instance_of = [&](const ResolvedPlugin& plugin) -> PluginInstance* {
      auto it = by_name.find(plugin.library->name());
      if (it != by_name.end()) return it->second;
      // resolve_profiles lists every filter/scorer in `plugins`; be safe.
      return add(plugin);
    };
    for (const ResolvedPlugin& f : profile.filters) {
      out.filters.push_back(instance_of(f));
      out.filter_timeout_ms.push_back(f.settings.timeout_ms);
      out.filter_shadows.push_back(shadow_of(f));
    }
    for (const ResolvedPlugin& s : profile.scorers) {
      out.scorers.push_back(instance_of(s));
      out.scorer_timeout_ms.push_back(s.settings.timeout_ms);
      out.scorer_shadows.push_back(shadow_of(s));
    }
    set->profiles_.push_back(std::move(out));
  }
  return set;
}

std::unique_ptr<CreatedPlugins> CreatedPlugins::adopt(
    std::vector<Created> instances) {
  std::unique_ptr<CreatedPlugins> set(new CreatedPlugins());
  set->instances_ = std::move(instances);
  return set;
}

const ProfilePlugins* CreatedPlugins::profile(
    std::string_view scheduler_name) const {
  for (const ProfilePlugins& p : profiles_) {
    if (p.scheduler_name == scheduler_name) return &p;
  }
  return nullptr;
}

}  // namespace schedplug::host
