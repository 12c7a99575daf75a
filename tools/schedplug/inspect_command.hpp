// `schedplug inspect FILE.so`: what a plugin reports about itself.
#pragma once

#include <filesystem>
#include <ostream>

namespace schedplug::tools {

// Loads `file` (no create() call) and prints its descriptor. Returns the
// process exit code: 0, or 1 when the file is not a valid plugin.
int run_inspect(const std::filesystem::path& file, bool json, std::ostream& out,
                std::ostream& err);

}  // namespace schedplug::tools
