// Shadow candidates: the plugin builds a profile names in
// `args.schedplug.shadow` to run beside the live plugin (shadow_runner.hpp).
// A candidate is loaded with the same file checks as any plugin and must
// report the live plugin's name.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "host/config/resolve.hpp"
#include "host/loader/plugin_library.hpp"

namespace schedplug::host {

// Loads the shadow file of every resolved plugin that names one (inside
// `plugin_dir`, relative to it; any other path is a problem and is never
// opened: shadow_path_problem) into ResolvedPlugin::shadow, once per file. A
// file of `loaded_before` with the same path and digest is taken as it is. A
// file that does not load, or reports another name, is a sentence in `problems`
// and leaves the plugin without a shadow.
void load_shadow_candidates(
    std::vector<ResolvedProfile>& profiles,
    const std::filesystem::path& plugin_dir,
    std::span<const std::shared_ptr<PluginLibrary>> loaded_before,
    std::vector<std::string>& problems);

// A shadow candidate's build, as an operator looks for it (the reload
// log, `schedplug-host probe --details`, schedplug_shadow_build_info).
struct ShadowBuild {
  std::string plugin;   // the live plugin it shadows (and reports)
  std::string version;  // the candidate's
  std::string file;     // args.schedplug.shadow: relative to the plugin dir
  std::string sha256;
  std::vector<std::string> profiles;  // the profiles that name it
};
// Every loaded candidate of `profiles`, once per plugin and file, sorted by
// plugin and file.
std::vector<ShadowBuild> shadow_builds(
    const std::vector<ResolvedProfile>& profiles);
// "Name 1.2.0 (candidates/x.so, sha256 1f04261893f6)" for logs.
std::string describe(const ShadowBuild& build);

// Every shadow library `profiles` hold, once each.
std::vector<std::shared_ptr<PluginLibrary>> shadow_libraries(
    const std::vector<ResolvedProfile>& profiles);

}  // namespace schedplug::host
