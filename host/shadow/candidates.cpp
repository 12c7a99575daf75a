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

}  // namespace schedplug::host
