// The checks schedplug-host runs at start-up, and `schedplug check` before
// a roll-out: one code path, so both report the same problems, in the same
// order, with the same sentences (docs/check.md).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "host/check/name_check.hpp"
#include "host/config/resolve.hpp"
#include "host/config/scheduler_config.hpp"
#include "host/loader/plugin_library.hpp"
#include "host/plugin/created_plugins.hpp"

namespace schedplug::host {

struct StartupCheckOptions {
  std::filesystem::path config;
  std::filesystem::path plugins;
  // Create every plugin instance (and shadow candidate) with its profile's
  // args, as the host does (`schedplug check --no-create` turns it off).
  bool create = true;
};

struct StartupCheck {
  // Unset when the file cannot be read as a KubeSchedulerConfiguration at
  // all (its problems are in `diagnostics`; the plugins are still checked).
  std::optional<SchedulerConfig> config;
  LoadResult loaded;
  std::vector<ResolvedProfile> profiles;  // shadow candidates loaded
  // Every finding: errors first, then warnings; each in file-line order
  // (the plugin files' first, then the configuration's by line).
  std::vector<Diagnostic> diagnostics;
  // With `create` and no error: the instances the check created, for the
  // host to take over instead of creating them a second time
  // (CreatedPlugins::create's `previous`).
  std::unique_ptr<CreatedPlugins> created;

  bool has_errors() const { return host::has_errors(diagnostics); }
  size_t errors() const;
};

// Reads the configuration (its args.schedplug.sha256 pins go into
// plugin_file_policy() before any plugin file is opened), loads the plugin
// directory and the shadow candidates, runs the name checks, resolves the
// profiles and, with `create`, creates every instance. Throws LoadError
// when the plugin directory cannot be read.
StartupCheck run_startup_check(const StartupCheckOptions& options);

// Sorts `diagnostics` as StartupCheck::diagnostics are: errors first, then
// warnings; within each, the messages not about `config` (plugin files) in
// the order given, then the configuration's by line.
void sort_diagnostics(std::vector<Diagnostic>& diagnostics,
                      const std::filesystem::path& config);

}  // namespace schedplug::host
