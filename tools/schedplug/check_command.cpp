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

// The native plugins of each profile that implement a v1.6 hook, by
// kube-scheduler's extension point, in the profile's order; only profiles
// with at least one.
struct ProfileHooks {
  std::string profile;
  std::vector<std::pair<const char*, std::vector<std::string>>> points;
};

std::vector<ProfileHooks> profile_hooks(
    const std::vector<host::ResolvedProfile>& profiles) {
  std::vector<ProfileHooks> out;
  for (const host::ResolvedProfile& profile : profiles) {
    ProfileHooks hooks{.profile = profile.scheduler_name, .points = {}};
    bool any = false;
    const auto point = [&](const char* name,
                           bool (host::PluginLibrary::*has)() const) {
      std::vector<std::string> names;
      for (const host::ResolvedPlugin& p : profile.plugins) {
        if (((*p.library).*has)()) names.push_back(p.library->name());
      }
      any = any || !names.empty();
      hooks.points.emplace_back(name, std::move(names));
    };
    point("Reserve", &host::PluginLibrary::has_reserve);
    point("Permit", &host::PluginLibrary::has_permit);
    point("PreBind", &host::PluginLibrary::has_pre_bind);
    point("PreEnqueue", &host::PluginLibrary::has_pre_enqueue);
    if (any) out.push_back(std::move(hooks));
  }
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
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
    j["hooks"] = nlohmann::json::array();
    for (const ProfileHooks& p : profile_hooks(check.profiles)) {
      nlohmann::json points;
      for (const auto& [point, names] : p.points) points[point] = names;
      j["hooks"].push_back({{"profile", p.profile}, {"plugins", points}});
    }
    // replace: a message may quote bytes of a file that are not UTF-8.
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    for (const auto& d : diagnostics) {
      out << (d.severity == Severity::kError ? "error: " : "warning: ")
          << d.message << "\n";
    }
    // The v1.6 hooks kube-scheduler will call per profile (the shim
    // registers these extension points only where a plugin has them).
    for (const ProfileHooks& p : profile_hooks(check.profiles)) {
      out << "profile \"" << p.profile << "\" hooks:";
      for (const auto& [point, names] : p.points)
        out << " " << point << ": " << joined(names) << ";";
      out << "\n";
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
