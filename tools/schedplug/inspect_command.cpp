#include "tools/schedplug/inspect_command.hpp"

#include <iomanip>
#include <optional>

#include <nlohmann/json.hpp>

#include "host/check/name_check.hpp"
#include "host/loader/plugin_file_check.hpp"
#include "host/loader/plugin_library.hpp"
#include "host/plugin/plugin_instance.hpp"
#include "tools/schedplug/bit_names.hpp"

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
  // The v1.6 hooks (kube-scheduler's Reserve and Unreserve go together).
  if (lib.has_reserve()) {
    points.emplace_back("Reserve");
    points.emplace_back("Unreserve");
  }
  if (lib.has_permit()) points.emplace_back("Permit");
  if (lib.has_pre_bind()) points.emplace_back("PreBind");
  if (lib.has_pre_enqueue()) points.emplace_back("PreEnqueue");
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

// The per-pod hooks, as the host uses them.
std::vector<std::string> pod_hooks(const schedplug_plugin& d) {
  std::vector<std::string> hooks;
  if (d.pod_begin != nullptr) hooks.emplace_back("pod_begin");
  if (d.pod_end != nullptr) hooks.emplace_back("pod_end");
  if (d.applies != nullptr) hooks.emplace_back("applies");
  return hooks;
}

std::string pod_hooks_text(const schedplug_plugin& d) {
  if (d.pod_begin != nullptr) {
    std::string text =
        "pod_begin, pod_end (per-pod state; pod_begin may skip Filter or "
        "Score for a pod)";
    if (d.applies != nullptr) text += "; applies for hosts before ABI v1.1";
    return text;
  }
  if (d.applies != nullptr) {
    return "applies (a per-pod gate: false skips Filter and Score for a pod)";
  }
  return "none";
}

// What create() with the args made of the instance's settings.
struct Declared {
  std::string error;  // create() failed: why
  uint64_t data = 0, hints = 0;
  std::vector<std::string> label_keys, annotation_keys;
};

Declared declared_by(const std::shared_ptr<PluginLibrary>& lib,
                     const std::string& args) {
  Declared out;
  try {
    const auto instance = host::PluginInstance::create(lib, args);
    out.data = instance->settings().data;
    out.hints = instance->settings().hints;
    out.label_keys = instance->pod_keys().labels();
    out.annotation_keys = instance->pod_keys().annotations();
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

std::string keys_text(const Declared& d) {
  std::string out;
  if (!d.label_keys.empty()) out = "labels " + join(d.label_keys);
  if (!d.annotation_keys.empty()) {
    out += (out.empty() ? "" : "; ") + std::string("annotations ") +
           join(d.annotation_keys);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

int run_inspect(const InspectOptions& options, std::ostream& out,
                std::ostream& err) {
  const auto& file = options.file;
  const bool json = options.json;
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
  const std::optional<Declared> declared =
      options.create ? std::optional(declared_by(lib, options.args))
                     : std::nullopt;

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
    j["pod_hooks"] = pod_hooks(d);
    j["normalization"] = lib->has_score() ? normalization(*lib) : "";
    j["refresh_period_ms"] =
        lib->has_refresh() ? nlohmann::json(d.refresh_period_ms) : nullptr;
    j["events_mask"] = d.events;
    j["events"] = events;
    j["in_tree_name_clash"] = host::is_in_tree_plugin(lib->name());
    if (declared) {
      nlohmann::json inst;
      inst["args"] = options.args;
      if (!declared->error.empty()) {
        inst["error"] = declared->error;
      } else {
        inst["data_mask"] = declared->data;
        inst["data"] = data_names(declared->data);
        inst["hints_mask"] = declared->hints;
        inst["hints"] = hint_names(declared->hints);
        inst["pod_label_keys"] = declared->label_keys;
        inst["pod_annotation_keys"] = declared->annotation_keys;
      }
      j["instance"] = inst;
    }
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
      points.empty() ? "none (no filter, score or v1.6 hook)" : join(points));
  row("per-pod hooks:", pod_hooks_text(d));
  if (lib->has_score()) row("normalization:", normalization_text(*lib));
  row("refresh:", lib->has_refresh()
                      ? "every " + std::to_string(d.refresh_period_ms) + " ms"
                      : "none");
  row("events:", events.empty() ? "any node or pod change (0)" : join(events));
  if (declared && !declared->error.empty()) {
    out << "create(" << options.args
        << ") failed, so what an instance declares is unknown: "
        << declared->error
        << "\n  pass the args of your profile with --args, or --no-create\n";
  } else if (declared) {
    out << "create(" << options.args << ") declares:\n";
    const auto data = data_names(declared->data);
    const auto hints = hint_names(declared->hints);
    row("  data:",
        data.empty() ? "none (the v1.1 pod and node views)" : join(data));
    row("  hints:", hints.empty() ? "none" : join(hints));
    row("  pod keys:", keys_text(*declared));
  }
  if (host::is_in_tree_plugin(lib->name())) {
    err << "warning: \"" << lib->name()
        << "\" is an upstream in-tree plugin name; profiles enabling it get "
           "the in-tree plugin, so rename this one\n";
  }
  return 0;
}

}  // namespace schedplug::tools
