// `schedplug check --config FILE --plugins DIR`: the name checks of
// The name checks of docs/check.md plus each plugin's create() with its
// profile's args.
#pragma once

#include <filesystem>
#include <ostream>

namespace schedplug::tools {

struct CheckOptions {
  std::filesystem::path config;
  std::filesystem::path plugins;
  bool json = false;
  bool create = true;  // also call create() with each profile's args
};

// Prints every diagnostic, errors first, and a summary. Returns the exit
// code: 0 (clean or warnings only), 1 (any error), 2 (the config file or
// the plugin directory cannot be read).
int run_check(const CheckOptions& options, std::ostream& out,
              std::ostream& err);

}  // namespace schedplug::tools
