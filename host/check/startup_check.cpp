#include "host/check/startup_check.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "host/check/create_check.hpp"
#include "host/loader/plugin_file_check.hpp"
#include "host/shadow/candidates.hpp"

namespace schedplug::host {
namespace {

// Where a message about `config` points: its line, 0 for the file as a
// whole; nullopt when the message is about something else (a plugin file).
std::optional<long> config_line(std::string_view message,
                                const std::string& config) {
  if (config.empty() || !message.starts_with(config)) return std::nullopt;
  message.remove_prefix(config.size());
  if (!message.starts_with(':')) return std::nullopt;
  message.remove_prefix(1);
  long line = 0;
  size_t digits = 0;
  while (digits < message.size() &&
         std::isdigit(static_cast<unsigned char>(message[digits]))) {
    line = line * 10 + (message[digits] - '0');
    ++digits;
  }
  if (digits > 0 && digits < message.size() && message[digits] == ':') {
    return line;
  }
  return 0;
}

}  // namespace

size_t StartupCheck::errors() const {
  return static_cast<size_t>(std::count_if(
      diagnostics.begin(), diagnostics.end(),
      [](const Diagnostic& d) { return d.severity == Severity::kError; }));
}

void sort_diagnostics(std::vector<Diagnostic>& diagnostics,
                      const std::filesystem::path& config) {
  const std::string file = config.string();
  const auto key = [&](const Diagnostic& d) {
    const std::optional<long> line = config_line(d.message, file);
    return std::make_tuple(d.severity == Severity::kError ? 0 : 1,
                           line.has_value() ? 1 : 0, line.value_or(0));
  };
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [&](const Diagnostic& a, const Diagnostic& b) {
                     return key(a) < key(b);
                   });
}

StartupCheck run_startup_check(const StartupCheckOptions& options) {
  StartupCheck out;
  std::vector<Diagnostic>& found = out.diagnostics;
  // The config first: its args.schedplug.sha256 pins are checked before
  // each plugin file is opened.
  std::vector<std::string> config_problems;
  plugin_file_policy().name_pins.clear();
  try {
    out.config = load_scheduler_config(options.config, config_problems);
    plugin_file_policy().name_pins =
        config_plugin_pins(*out.config, config_problems);
    plugin_file_policy().name_pins_source = options.config;
  } catch (const ConfigError& e) {
    for (const std::string& p : e.problems()) {
      found.push_back({Severity::kError, p});
    }
  }
  for (std::string& p : config_problems) {
    found.push_back({Severity::kError, std::move(p)});
  }
  out.loaded = load_plugin_directory(options.plugins);
  if (!out.config) {
    // The configuration cannot be checked further; the plugins still can.
    for (const LoadProblem& p : out.loaded.problems) {
      found.push_back({Severity::kError, p.message});
    }
    sort_diagnostics(found, options.config);
    return out;
  }
  const std::vector<Diagnostic> names =
      check_names(*out.config, out.loaded.plugins, out.loaded.problems);
  found.insert(found.end(), names.begin(), names.end());
  std::vector<std::string> resolve_problems;
  out.profiles =
      resolve_profiles(*out.config, out.loaded.plugins, resolve_problems);
  load_shadow_candidates(out.profiles, options.plugins, {}, resolve_problems);
  for (std::string& p : resolve_problems) {
    found.push_back({Severity::kError, std::move(p)});
  }
  if (options.create) {
    std::vector<CreatedPlugins::Created> created;
    const std::vector<Diagnostic> creates =
        check_create(*out.config, out.profiles, &created);
    found.insert(found.end(), creates.begin(), creates.end());
    if (!has_errors(found)) {
      out.created = CreatedPlugins::adopt(std::move(created));
    }
  }
  sort_diagnostics(found, options.config);
  return out;
}

}  // namespace schedplug::host
