#include "host/shadow/candidates.hpp"

#include <algorithm>
#include <map>

namespace schedplug::host {

void load_shadow_candidates(
    std::vector<ResolvedProfile>& profiles,
    const std::filesystem::path& plugin_dir,
    std::span<const std::shared_ptr<PluginLibrary>> loaded_before,
    std::vector<std::string>& problems) {
  std::map<std::filesystem::path, std::shared_ptr<PluginLibrary>> loaded;
  std::map<std::filesystem::path, std::string> failed;
  for (ResolvedProfile& profile : profiles) {
    for (auto* list : {&profile.plugins, &profile.filters, &profile.scorers}) {
      for (ResolvedPlugin& plugin : *list) {
        if (plugin.settings.shadow.empty()) continue;
        const std::string where = "profile \"" + profile.scheduler_name +
                                  "\", plugin " + plugin.library->name() +
                                  ": args.schedplug.shadow " +
                                  plugin.settings.shadow + ": ";
        // resolve_profiles refuses such a path; whoever else fills the
        // settings, nothing outside plugin_dir is opened.
        if (std::string problem = shadow_path_problem(plugin.settings.shadow);
            !problem.empty()) {
          if (list == &profile.plugins) problems.push_back(where + problem);
          continue;
        }
        const std::filesystem::path file =
            plugin_dir / std::filesystem::path(plugin.settings.shadow);
        if (auto f = failed.find(file); f != failed.end()) {
          if (list == &profile.plugins) problems.push_back(where + f->second);
          continue;
        }
        auto it = loaded.find(file);
        if (it == loaded.end()) {
          try {
            it = loaded.emplace(file, load_plugin_file(file, loaded_before))
                     .first;
          } catch (const LoadError& e) {
            failed[file] = std::string(e.what()) +
                           " (the candidate is not run; the live plugin "
                           "serves as before)";
            if (list == &profile.plugins)
              problems.push_back(where + failed[file]);
            continue;
          }
        }
        if (it->second->name() != plugin.library->name()) {
          if (list == &profile.plugins) {
            problems.push_back(where + "the file reports the plugin name \"" +
                               it->second->name() +
                               "\"; a shadow candidate is another build "
                               "of " +
                               plugin.library->name() +
                               " and must report that name");
          }
          continue;
        }
        plugin.shadow = it->second;
      }
    }
  }
}

std::vector<std::shared_ptr<PluginLibrary>> shadow_libraries(
    const std::vector<ResolvedProfile>& profiles) {
  std::vector<std::shared_ptr<PluginLibrary>> out;
  for (const ResolvedProfile& profile : profiles) {
    for (const ResolvedPlugin& plugin : profile.plugins) {
      if (plugin.shadow != nullptr &&
          std::find(out.begin(), out.end(), plugin.shadow) == out.end()) {
        out.push_back(plugin.shadow);
      }
    }
  }
  return out;
}

std::vector<ShadowBuild> shadow_builds(
    const std::vector<ResolvedProfile>& profiles) {
  std::map<std::pair<std::string, std::string>, ShadowBuild> builds;
  for (const ResolvedProfile& profile : profiles) {
    for (const ResolvedPlugin& plugin : profile.plugins) {
      if (plugin.shadow == nullptr) continue;
      ShadowBuild& b = builds[{plugin.library->name(), plugin.settings.shadow}];
      b.plugin = plugin.library->name();
      b.version = plugin.shadow->version();
      b.file = plugin.settings.shadow;
      b.sha256 = plugin.shadow->sha256();
      if (std::find(b.profiles.begin(), b.profiles.end(),
                    profile.scheduler_name) == b.profiles.end()) {
        b.profiles.push_back(profile.scheduler_name);
      }
    }
  }
  std::vector<ShadowBuild> out;
  for (auto& [_, b] : builds) out.push_back(std::move(b));
  return out;
}

std::string describe(const ShadowBuild& build) {
  return build.plugin + " " + build.version + " (" + build.file + ", sha256 " +
         build.sha256.substr(0, 12) + ")";
}

}  // namespace schedplug::host
