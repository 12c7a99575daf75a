// `schedplug inspect FILE.so`: what a plugin reports about itself.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

namespace schedplug::tools {

struct InspectOptions {
  std::filesystem::path file;
  bool json = false;
  // create() is called with these args to show what the instance declares
  // (data, hints, pod keys: plugin.h's settings are per instance); false
  // shows only the descriptor.
  bool create = true;
  std::string args = "{}";
};

// Loads the file and prints its descriptor and, unless told not to, what
// an instance created with the args declares. Returns the process exit
// code: 0, or 1 when the file is not a valid plugin. A create() that fails
// is shown, not an exit 1: `check` judges args against a profile.
int run_inspect(const InspectOptions& options, std::ostream& out,
                std::ostream& err);

}  // namespace schedplug::tools
