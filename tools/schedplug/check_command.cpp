#include "tools/schedplug/check_command.hpp"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "host/check/startup_check.hpp"

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
  // Exactly what schedplug-host runs at start-up (one code path).
  host::StartupCheck check;
  try {
    check = host::run_startup_check({.config = options.config,
                                     .plugins = options.plugins,
                                     .create = options.create});
  } catch (const host::LoadError& e) {
    err << "error: " << e.what() << "\n";
    return 2;
  }
  const std::vector<Diagnostic>& diagnostics = check.diagnostics;
  const host::LoadResult& loaded = check.loaded;
  const std::optional<host::SchedulerConfig>& config = check.config;

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
