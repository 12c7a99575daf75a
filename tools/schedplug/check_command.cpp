#include "tools/schedplug/check_command.hpp"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "host/check/create_check.hpp"
#include "host/check/name_check.hpp"
#include "host/config/resolve.hpp"
#include "host/loader/plugin_file_check.hpp"
#include "host/shadow/candidates.hpp"

namespace schedplug::tools {
namespace {

using host::Diagnostic;
using host::Severity;

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

int run_check(const CheckOptions& options, std::ostream& out,
              std::ostream& err) {
  // Unreadable inputs are usage problems (exit 2), not findings.
  if (!std::ifstream(options.config)) {
    err << "error: " << options.config.string()
        << ": cannot read the scheduler configuration; check the path\n";
    return 2;
  }
  // The config first: its args.schedplug.sha256 pins are checked before
  // each plugin file is opened, as schedplug-host does.
  std::vector<std::string> config_problems;
  std::optional<host::SchedulerConfig> config;
  std::vector<std::string> config_errors;
  try {
    config = host::load_scheduler_config(options.config, config_problems);
    host::plugin_file_policy().name_pins =
        host::config_plugin_pins(*config, config_problems);
    host::plugin_file_policy().name_pins_source = options.config;
  } catch (const host::ConfigError& e) {
    config_errors = e.problems();
  }
  host::LoadResult loaded;
  try {
    loaded = host::load_plugin_directory(options.plugins);
  } catch (const host::LoadError& e) {
    err << "error: " << e.what() << "\n";
    return 2;
  }

  // Every problem at once: the parser and the resolver step over what
  // they can and report it, so a bad weight does not hide a bad name.
  std::vector<Diagnostic> diagnostics;
  if (!config) {
    // The config cannot be checked further, but the plugins still can.
    for (const auto& p : loaded.problems) {
      diagnostics.push_back({Severity::kError, p.message});
    }
    for (const auto& p : config_errors) {
      diagnostics.push_back({Severity::kError, p});
    }
  }
  for (const auto& p : config_problems) {
    diagnostics.push_back({Severity::kError, p});
  }
  if (config) {
    auto names = host::check_names(*config, loaded.plugins, loaded.problems);
    diagnostics.insert(diagnostics.end(), names.begin(), names.end());
    std::vector<std::string> resolve_problems;
    auto profiles =
        host::resolve_profiles(*config, loaded.plugins, resolve_problems);
    host::load_shadow_candidates(profiles, options.plugins, {},
                                 resolve_problems);
    for (const auto& p : resolve_problems) {
      diagnostics.push_back({Severity::kError, p});
    }
    if (options.create) {
      auto created = host::check_create(*config, profiles);
      diagnostics.insert(diagnostics.end(), created.begin(), created.end());
    }
  }
  std::stable_partition(
      diagnostics.begin(), diagnostics.end(),
      [](const Diagnostic& d) { return d.severity == Severity::kError; });

  const auto errors = static_cast<std::size_t>(std::count_if(
      diagnostics.begin(), diagnostics.end(),
      [](const Diagnostic& d) { return d.severity == Severity::kError; }));
  const std::size_t warnings = diagnostics.size() - errors;

  if (options.json) {
    nlohmann::json j;
    j["config"] = options.config.string();
    j["plugins_dir"] = options.plugins.string();
    j["plugins"] = nlohmann::json::array();
    for (const auto& lib : loaded.plugins) {
      j["plugins"].push_back({{"name", lib->name()},
                              {"version", lib->version()},
                              {"file", lib->file().string()}});
    }
    j["diagnostics"] = nlohmann::json::array();
    for (const auto& d : diagnostics) {
      j["diagnostics"].push_back(
          {{"severity", d.severity == Severity::kError ? "error" : "warning"},
           {"message", d.message}});
    }
    j["errors"] = errors;
    j["warnings"] = warnings;
    // replace: a message may quote bytes of a file that are not UTF-8.
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    for (const auto& d : diagnostics) {
      out << (d.severity == Severity::kError ? "error: " : "warning: ")
          << d.message << "\n";
    }
    if (diagnostics.empty()) {
      out << "ok: " << plural(loaded.plugins.size(), "plugin") << " in "
          << options.plugins.string() << ", "
          << plural(config ? config->profiles.size() : 0, "profile") << " in "
          << options.config.string() << ", no problems\n";
    } else {
      out << plural(errors, "error") << ", " << plural(warnings, "warning")
          << "\n";
    }
  }
  return errors > 0 ? 1 : 0;
}

}  // namespace schedplug::tools
