// resolve_profiles: each profile's native plugins per extension point in
// upstream's order, with their weights, args and host settings checked. One
// file: it follows upstream's merge of a profile's plugin sets step by step,
// and the weight, args and pin checks read the sets that merge gives.
#include "host/config/resolve.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "host/check/name_check.hpp"

namespace schedplug::host {
namespace {

// An insertion-ordered set of names (upstream's orderedSet).
class OrderedNames {
 public:
  bool has(const std::string& name) const {
    return std::find(list_.begin(), list_.end(), name) != list_.end();
  }
  void insert(const std::string& name) {
    if (!has(name)) list_.push_back(name);
  }
  void erase(const std::string& name) {
    list_.erase(std::remove(list_.begin(), list_.end(), name), list_.end());
  }
  const std::vector<std::string>& list() const { return list_; }

 private:
  std::vector<std::string> list_;
};

const PluginSet& set_at(const Profile& profile, ExtensionPoint point) {
  static const PluginSet kEmpty;
  auto it = profile.plugins.find(point);
  return it == profile.plugins.end() ? kEmpty : it->second;
}

// The native plugins kube-scheduler runs at `point`, in its order, after
// expanding multiPoint exactly as upstream's expandMultiPointPlugins
// (pkg/scheduler/framework/runtime/framework.go) does:
//   1. plugins enabled at the point AND via multiPoint (an override), in
//      the point's order;
//   2. plugins enabled only via multiPoint, in multiPoint's order;
//   3. the rest of the point's own enabled list.
// A point's `disabled` list removes multiPoint plugins there; "*" skips
// multiPoint expansion for the point entirely. Default (in-tree) plugins
// never matter here: only native ones are returned.
std::vector<std::string> natives_at(
    const Profile& profile, ExtensionPoint point,
    const std::map<std::string, std::shared_ptr<PluginLibrary>>& natives,
    bool (*implements)(const PluginLibrary&)) {
  const PluginSet& specific = set_at(profile, point);
  OrderedNames enabled;
  for (const auto& ref : specific.enabled) enabled.insert(ref.name);

  OrderedNames multi_point;
  OrderedNames overrides;
  bool all_disabled = false;
  std::vector<std::string> disabled;
  for (const auto& ref : specific.disabled) {
    if (ref.name == "*") all_disabled = true;
    disabled.push_back(ref.name);
  }
  if (!all_disabled) {
    for (const auto& ref :
         set_at(profile, ExtensionPoint::kMultiPoint).enabled) {
      auto lib = natives.find(ref.name);
      if (lib == natives.end() || !implements(*lib->second)) continue;
      if (std::find(disabled.begin(), disabled.end(), ref.name) !=
          disabled.end()) {
        continue;
      }
      if (enabled.has(ref.name)) {
        overrides.insert(ref.name);
        continue;
      }
      multi_point.insert(ref.name);
    }
  }

  std::vector<std::string> order;
  for (const auto& name : enabled.list()) {
    if (overrides.has(name)) order.push_back(name);
  }
  for (const auto& name : multi_point.list()) order.push_back(name);
  for (const auto& name : enabled.list()) {
    if (!overrides.has(name)) order.push_back(name);
  }
  // Natives enabled at a point they do not implement are check_names'
  // business; they cannot run there.
  std::erase_if(order, [&](const std::string& name) {
    auto lib = natives.find(name);
    return lib == natives.end() || !implements(*lib->second);
  });
  return order;
}

bool filters(const PluginLibrary& lib) { return lib.has_filter(); }
bool scores(const PluginLibrary& lib) { return lib.has_score(); }

// Go's time.ParseDuration subset: a sequence of <number><unit>, e.g.
// "50ms", "1.5s", "1m30s". Returns milliseconds, or -1 when invalid.
double parse_duration_ms(const std::string& text) {
  static const std::regex kPart("([0-9]*\\.?[0-9]+)(ns|us|µs|ms|s|m|h)");
  static const std::map<std::string, double> kUnitMs = {
      {"ns", 1e-6}, {"us", 1e-3}, {"µs", 1e-3}, {"ms", 1.0},
      {"s", 1e3},   {"m", 6e4},   {"h", 3.6e6}};
  if (text.empty()) return -1;
  double total = 0;
  auto begin = text.cbegin();
  std::smatch m;
  while (begin != text.cend()) {
    if (!std::regex_search(begin, text.cend(), m, kPart,
                           std::regex_constants::match_continuous)) {
      return -1;
    }
    // strtod, not std::stod: 400 digits are out of range for a double and
    // must be "not a valid timeout", not an exception out of the parser.
    total += std::strtod(m[1].str().c_str(), nullptr) * kUnitMs.at(m[2].str());
    begin = m[0].second;
  }
  return total;
}

// Upstream's getScoreWeights: the score list's entry wins over
// multiPoint's; a weight of 0 or none means 1. 0 when neither enables it.
int config_weight(const Profile& profile, const std::string& name) {
  for (ExtensionPoint point :
       {ExtensionPoint::kScore, ExtensionPoint::kMultiPoint}) {
    for (const auto& ref : set_at(profile, point).enabled) {
      if (ref.name == name)
        return ref.weight.value_or(0) == 0 ? 1 : *ref.weight;
    }
  }
  return 0;
}

struct ParsedArgs {
  std::string args_json;
  HostSettings settings;
};

// Reads the plugin's args; every problem with the `schedplug` key is
// appended to `problems` and its setting keeps the default.
ParsedArgs parse_args(const SchedulerConfig& config, const Profile& profile,
                      const PluginConfigEntry* entry,
                      std::vector<std::string>& problems) {
  ParsedArgs out;
  if (entry == nullptr) {
    out.args_json = "{}";
    return out;
  }
  const std::string where =
      (config.file.empty() ? std::string("<config>") : config.file.string()) +
      (entry->line > 0 ? ":" + std::to_string(entry->line) : "") +
      ": profile \"" + profile.scheduler_name + "\", pluginConfig \"" +
      entry->name + "\": ";
  nlohmann::json args = nlohmann::json::parse(entry->args_json);
  if (args.contains("schedplug")) {
    const nlohmann::json& s = args["schedplug"];
    if (!s.is_object()) {
      problems.push_back(where +
                         "args.schedplug must be a mapping with failurePolicy, "
                         "timeout, sha256, shadow and/or simulatorAnnotations");
    } else {
      for (const auto& [key, value] : s.items()) {
        if (key == "failurePolicy") {
          if (!value.is_string() || (value != "Fail" && value != "Ignore")) {
            problems.push_back(where + "args.schedplug.failurePolicy is " +
                               value.dump() +
                               "; it must be \"Fail\" or \"Ignore\"");
            continue;
          }
          out.settings.failure_policy = value.get<std::string>();
        } else if (key == "timeout") {
          const double ms = value.is_string()
                                ? parse_duration_ms(value.get<std::string>())
                                : -1;
          if (ms < 1 || ms != std::floor(ms) || ms > 3.6e6) {
            problems.push_back(
                where + "args.schedplug.timeout is " + value.dump() +
                "; write a duration of whole milliseconds between 1ms and "
                "1h, like \"50ms\" or \"1s\"");
            continue;
          }
          out.settings.timeout_ms = static_cast<int>(ms);
        } else if (key == "sha256") {
          // A pin: config_plugin_pins reads and checks it before loading.
        } else if (key == "shadow") {
          if (!value.is_string() || value.get<std::string>().empty()) {
            problems.push_back(
                where + "args.schedplug.shadow is " + value.dump() +
                "; write the candidate plugin file to run in shadow, "
                "relative to the plugin directory, like "
                "\"candidates/hw_encrypt.so\"");
            continue;
          }
          if (std::string problem =
                  shadow_path_problem(value.get<std::string>());
              !problem.empty()) {
            problems.push_back(where + problem);
            continue;
          }
          out.settings.shadow = value.get<std::string>();
        } else if (key == "simulatorAnnotations") {
          // Only the shim acts on it (docs/simulator-annotations.md); the
          // host checks it so that `schedplug check` reports a bad value.
          if (!value.is_boolean()) {
            problems.push_back(
                where + "args.schedplug.simulatorAnnotations is " +
                value.dump() +
                "; write true (this profile's pods get the native plugins' "
                "results in kube-scheduler-simulator's annotations) or false");
            continue;
          }
          out.settings.simulator_annotations = value.get<bool>();
        } else {
          problems.push_back(where + "args.schedplug has the unknown key \"" +
                             key +
                             "\"; the host understands failurePolicy, "
                             "timeout, sha256, shadow and "
                             "simulatorAnnotations");
        }
      }
    }
    args.erase("schedplug");
  }
  out.args_json = args.dump();
  return out;
}

// simulatorAnnotations is a profile's setting written on any one of its
// native plugins; a profile whose plugins say both true and false is
// refused rather than guessed (the shim refuses it too).
void check_simulator_annotations(const SchedulerConfig& config,
                                 const ResolvedProfile& profile,
                                 std::vector<std::string>& problems) {
  const ResolvedPlugin* on = nullptr;
  const ResolvedPlugin* off = nullptr;
  for (const ResolvedPlugin& p : profile.plugins) {
    const std::optional<bool>& v = p.settings.simulator_annotations;
    if (!v.has_value()) continue;
    const ResolvedPlugin*& first = *v ? on : off;
    if (first == nullptr) first = &p;
  }
  if (on == nullptr || off == nullptr) return;
  problems.push_back(
      (config.file.empty() ? std::string("<config>") : config.file.string()) +
      ": profile \"" + profile.scheduler_name + "\": pluginConfig \"" +
      on->library->name() + "\" sets args.schedplug.simulatorAnnotations " +
      "true but \"" + off->library->name() +
      "\" sets it false; it is one setting for the whole profile: write it " +
      "on one native plugin only");
}

}  // namespace

std::string shadow_path_problem(const std::string& shadow) {
  // Lexical: a shadow is loaded only from inside --plugins, so a
  // configuration (or a recording replayed with it) cannot make the host
  // run code from elsewhere on the disk.
  const std::filesystem::path path(shadow);
  const char* what = nullptr;
  if (path.is_absolute()) {
    what = "an absolute path";
  } else {
    for (const auto& part : path) {
      if (part == "..") {
        what = "a path that climbs out with \"..\"";
        break;
      }
    }
  }
  if (what == nullptr) return {};
  nlohmann::json quoted = shadow;
  return "args.schedplug.shadow is " +
         quoted.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         ", " + what +
         "; a shadow candidate is loaded only from the plugin directory: "
         "copy the file into it (a subdirectory such as candidates/ keeps "
         "it apart from the plugins) and write its path relative to that "
         "directory, without \"..\", like \"candidates/hw_encrypt.so\"";
}

std::map<std::string, std::string> config_plugin_pins(
    const SchedulerConfig& config, std::vector<std::string>& problems) {
  std::map<std::string, std::string> pins;
  std::map<std::string, std::string> pinned_by;  // name -> "profile \"p\""
  const std::string file =
      config.file.empty() ? std::string("<config>") : config.file.string();
  for (const Profile& profile : config.profiles) {
    for (const PluginConfigEntry& entry : profile.plugin_config) {
      const nlohmann::json args = nlohmann::json::parse(entry.args_json);
      if (!args.is_object() || !args.contains("schedplug") ||
          !args["schedplug"].is_object() ||
          !args["schedplug"].contains("sha256")) {
        continue;
      }
      const std::string where =
          file + (entry.line > 0 ? ":" + std::to_string(entry.line) : "") +
          ": profile \"" + profile.scheduler_name + "\", pluginConfig \"" +
          entry.name + "\": ";
      const nlohmann::json& value = args["schedplug"]["sha256"];
      std::string digest = value.is_string() ? value.get<std::string>() : "";
      std::transform(digest.begin(), digest.end(), digest.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      const bool hex =
          digest.size() == 64 &&
          std::all_of(digest.begin(), digest.end(),
                      [](unsigned char c) { return std::isxdigit(c) != 0; });
      if (!hex) {
        problems.push_back(where + "args.schedplug.sha256 is " + value.dump() +
                           "; write the plugin file's SHA-256 as 64 hex "
                           "digits, as `sha256sum` or `schedplug inspect` "
                           "prints it");
        continue;
      }
      const std::string here = "profile \"" + profile.scheduler_name + "\"";
      auto [it, inserted] = pins.emplace(entry.name, digest);
      if (!inserted && it->second != digest) {
        problems.push_back(where + "args.schedplug.sha256 pins " + digest +
                           " but " + pinned_by[entry.name] + " pins " +
                           it->second + " for the same plugin; one file " +
                           "serves every profile, so pin the same digest");
        continue;
      }
      pinned_by.emplace(entry.name, here);
    }
  }
  return pins;
}

std::vector<std::string> native_plugins_at(
    const Profile& profile, ExtensionPoint point,
    const std::vector<std::shared_ptr<PluginLibrary>>& plugins) {
  std::map<std::string, std::shared_ptr<PluginLibrary>> natives;
  for (const auto& lib : plugins) {
    if (!is_in_tree_plugin(lib->name())) natives[lib->name()] = lib;
  }
  const bool score_side =
      point == ExtensionPoint::kPreScore || point == ExtensionPoint::kScore;
  return natives_at(profile, point, natives, score_side ? scores : filters);
}

std::vector<ResolvedProfile> resolve_profiles(
    const SchedulerConfig& config,
    const std::vector<std::shared_ptr<PluginLibrary>>& plugins) {
  std::vector<std::string> problems;
  auto out = resolve_profiles(config, plugins, problems);
  if (!problems.empty()) throw ConfigError(std::move(problems));
  return out;
}

std::vector<ResolvedProfile> resolve_profiles(
    const SchedulerConfig& config,
    const std::vector<std::shared_ptr<PluginLibrary>>& plugins,
    std::vector<std::string>& problems) {
  std::map<std::string, std::shared_ptr<PluginLibrary>> natives;
  for (const auto& lib : plugins) {
    // An in-tree name always means the in-tree plugin.
    if (!is_in_tree_plugin(lib->name())) natives[lib->name()] = lib;
  }

  std::vector<ResolvedProfile> out;
  for (const auto& profile : config.profiles) {
    ResolvedProfile resolved;
    resolved.scheduler_name = profile.scheduler_name;

    std::map<std::string, ParsedArgs> args_by_name;
    auto resolve_one = [&](const std::string& name) {
      auto it = args_by_name.find(name);
      if (it == args_by_name.end()) {
        const PluginConfigEntry* entry = nullptr;
        for (const auto& e : profile.plugin_config) {
          if (e.name == name) entry = &e;
        }
        it = args_by_name
                 .emplace(name, parse_args(config, profile, entry, problems))
                 .first;
      }
      ResolvedPlugin p;
      p.library = natives.at(name);
      p.args_json = it->second.args_json;
      p.settings = it->second.settings;
      p.config_weight = config_weight(profile, name);
      return p;
    };

    for (const auto& name :
         natives_at(profile, ExtensionPoint::kFilter, natives, filters)) {
      resolved.filters.push_back(resolve_one(name));
    }
    for (const auto& name :
         natives_at(profile, ExtensionPoint::kScore, natives, scores)) {
      ResolvedPlugin p = resolve_one(name);
      // Upstream (getValidScoreWeights): the Score list's entry wins over
      // multiPoint's; a weight of 0 or none means 1.
      std::optional<int> weight;
      bool found = false;
      for (const auto& ref : set_at(profile, ExtensionPoint::kScore).enabled) {
        if (!found && ref.name == name) {
          weight = ref.weight;
          found = true;
        }
      }
      for (const auto& ref :
           set_at(profile, ExtensionPoint::kMultiPoint).enabled) {
        if (!found && ref.name == name) {
          weight = ref.weight;
          found = true;
        }
      }
      p.weight = weight.value_or(0) == 0 ? 1 : *weight;
      resolved.scorers.push_back(std::move(p));
    }

    OrderedNames everywhere;
    for (auto point : all_extension_points()) {
      for (const auto& ref : set_at(profile, point).enabled) {
        if (natives.count(ref.name) != 0) everywhere.insert(ref.name);
      }
    }
    for (const auto& name : everywhere.list()) {
      ResolvedPlugin p = resolve_one(name);
      for (const auto& s : resolved.scorers) {
        if (s.library == p.library) p.weight = s.weight;
      }
      resolved.plugins.push_back(std::move(p));
    }
    check_simulator_annotations(config, resolved, problems);
    out.push_back(std::move(resolved));
  }
  return out;
}

}  // namespace schedplug::host
