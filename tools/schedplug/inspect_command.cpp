#include "tools/schedplug/inspect_command.hpp"

#include <iomanip>

#include <nlohmann/json.hpp>

#include "host/check/name_check.hpp"
#include "host/loader/plugin_file_check.hpp"
#include "host/loader/plugin_library.hpp"
#include "tools/schedplug/event_names.hpp"

namespace schedplug::tools {
namespace {

using host::PluginLibrary;

std::vector<std::string> extension_points(const PluginLibrary& lib) {
  std::vector<std::string> points;
  if (lib.has_filter()) {
    points.emplace_back("PreFilter");
    points.emplace_back("Filter");
  }
  if (lib.has_score()) {
    points.emplace_back("PreScore");
    points.emplace_back("Score");
    points.emplace_back("NormalizeScore");
  }
  return points;
}

// How scores become [0, 100]: "plugin" (its own normalize_score) or the
// declared policy.
std::string normalization(const PluginLibrary& lib) {
  const auto& d = lib.descriptor();
  if (d.normalize_score != nullptr) return "plugin";
  switch (d.normalize_policy) {
    case SCHEDPLUG_NORMALIZE_LINEAR:
      return "linear";
    case SCHEDPLUG_NORMALIZE_REVERSE:
      return "reverse";
    default:
      return "none";
  }
}

std::string normalization_text(const PluginLibrary& lib) {
  const std::string n = normalization(lib);
  if (n == "plugin") return "by the plugin's own NormalizeScore";
  if (n == "linear") return "host, linear min-max (highest raw score -> 100)";
  if (n == "reverse") return "host, reversed min-max (lowest raw score -> 100)";
  return "none (scores must already be in [0, 100])";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

}  // namespace

int run_inspect(const std::filesystem::path& file, bool json, std::ostream& out,
                std::ostream& err) {
  std::shared_ptr<PluginLibrary> lib;
  try {
    lib = host::load_plugin_file(file);
  } catch (const host::LoadError& e) {
    if (json) {
      out << nlohmann::json{{"file", file.string()}, {"error", e.what()}}.dump(
                 2, ' ', false, nlohmann::json::error_handler_t::replace)
          << "\n";
    } else {
      err << "error: " << e.what() << "\n";
    }
    return 1;
  }
  const auto& d = lib->descriptor();
  // For a --plugin-sha256 list (docs/security.md).
  std::string sha256;
  try {
    sha256 = host::file_sha256(file);
  } catch (const std::exception& e) {
    sha256 = std::string("unreadable: ") + e.what();
  }
  const auto points = extension_points(*lib);
  const auto events = event_names(d.events);

  if (json) {
    nlohmann::json j;
    j["file"] = lib->file().string();
    j["name"] = lib->name();
    j["version"] = lib->version();
    j["sha256"] = sha256;
    j["abi_version"] = lib->abi_version();
    j["descriptor_size"] = d.struct_size;
    j["extension_points"] = points;
    j["applies_gate"] = d.applies != nullptr;
    j["normalization"] = lib->has_score() ? normalization(*lib) : "";
    j["refresh_period_ms"] =
        lib->has_refresh() ? nlohmann::json(d.refresh_period_ms) : nullptr;
    j["events_mask"] = d.events;
    j["events"] = events;
    j["in_tree_name_clash"] = host::is_in_tree_plugin(lib->name());
    // replace: a message may quote bytes of a file that are not UTF-8.
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return 0;
  }

  auto row = [&](const char* label, const std::string& value) {
    out << std::left << std::setw(18) << label << value << "\n";
  };
  row("file:", lib->file().string());
  row("name:", lib->name());
  row("version:", lib->version());
  row("sha256:", sha256);
  row("ABI version:",
      std::to_string(lib->abi_version()) +
          " (this host: " + std::to_string(SCHEDPLUG_ABI_VERSION) +
          "), descriptor " + std::to_string(d.struct_size) + " bytes");
  row("extension points:",
      points.empty() ? "none (no filter or score hook)" : join(points));
  row("per-pod gate:", d.applies != nullptr ? "yes (applies hook)" : "no");
  if (lib->has_score()) row("normalization:", normalization_text(*lib));
  row("refresh:", lib->has_refresh()
                      ? "every " + std::to_string(d.refresh_period_ms) + " ms"
                      : "none");
  row("events:", events.empty() ? "any node or pod change (0)" : join(events));
  if (host::is_in_tree_plugin(lib->name())) {
    err << "warning: \"" << lib->name()
        << "\" is an upstream in-tree plugin name; profiles enabling it get "
           "the in-tree plugin, so rename this one\n";
  }
  return 0;
}

}  // namespace schedplug::tools
