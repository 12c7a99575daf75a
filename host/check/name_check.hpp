// The name rules (docs/check.md): every native name a profile
// enables is reported by exactly one loaded plugin, at an extension point
// it implements. Used by `schedplug check`, by schedplug-host at start-up
// and by the Handshake.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "host/config/scheduler_config.hpp"
#include "host/loader/plugin_library.hpp"

namespace schedplug::host {

enum class Severity { kError, kWarning };

struct Diagnostic {
  Severity severity = Severity::kError;
  // One full sentence (or two): what is wrong, where (file, profile,
  // extension point, .so file), and what to do, e.g.
  //   config.yaml:12: profile "my-scheduler", extension point "filter":
  //   plugin "hwEncrypt" is not an in-tree plugin and no loaded .so reports
  //   it; did you mean "HwEncrypt" (plugins/hw_encrypt.so)? names are
  //   case-sensitive
  std::string message;
};

// Runs every rule and returns every finding at once (errors and warnings,
// errors first). `load_problems` are reported as errors too, so one call
// gives the whole picture.
std::vector<Diagnostic> check_names(
    const SchedulerConfig& config,
    const std::vector<std::shared_ptr<PluginLibrary>>& plugins,
    const std::vector<LoadProblem>& load_problems = {});

bool has_errors(const std::vector<Diagnostic>& diagnostics);

// True for the upstream in-tree plugin names of the k8s.io/kubernetes
// version this release targets (pkg/scheduler/framework/plugins/names).
bool is_in_tree_plugin(const std::string& name);
// All of them, sorted (for suggestions and `schedplug` output).
const std::vector<std::string>& in_tree_plugin_names();

}  // namespace schedplug::host
