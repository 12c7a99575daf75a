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

// Every shadow library `profiles` hold, once each.
std::vector<std::shared_ptr<PluginLibrary>> shadow_libraries(
    const std::vector<ResolvedProfile>& profiles);

}  // namespace schedplug::host
