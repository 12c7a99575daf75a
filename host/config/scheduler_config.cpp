// The KubeSchedulerConfiguration reader: each field of upstream's schema
// the host understands, with a message naming the file and line for every
// wrong one; long because the schema is.
#include "host/config/scheduler_config.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "host/check/suggest.hpp"
#include "host/config/yaml_bounds.hpp"

namespace schedplug::host {
namespace {

constexpr const char* kApiVersion = "kubescheduler.config.k8s.io/v1";
constexpr const char* kKind = "KubeSchedulerConfiguration";

// Builds "file:line: message" errors for one file and collects them.
// fail() throws (ConfigError) out of the part being parsed; recover() runs
// a part, and when it fails notes the problem and carries on, so one
// run reports every problem it can step over.
class Reporter {
 public:
  Reporter(std::filesystem::path file, std::vector<std::string>& problems)
      : file_(std::move(file)), problems_(&problems) {}

  std::string where(const YAML::Node& node) const {
    std::string out = file_.empty() ? "<config>" : file_.string();
    const int line = line_of(node);
    if (line > 0) out += ":" + std::to_string(line);
    return out;
  }
  [[noreturn]] void fail(const YAML::Node& node, const std::string& msg) const {
    throw ConfigError(where(node) + ": " + msg);
  }
  // Notes a problem and lets the caller go on.
  void report(const YAML::Node& node, const std::string& msg) const {
    problems_->push_back(where(node) + ": " + msg);
  }
  // Runs `part`; a ConfigError from it is noted. False when it failed.
  template <class F>
  bool recover(F&& part) const {
    try {
      part();
      return true;
    } catch (const ConfigError& e) {
      for (const auto& p : e.problems()) problems_->push_back(p);
      return false;
    }
  }
  static int line_of(const YAML::Node& node) {
    const YAML::Mark mark = node.Mark();
    return mark.is_null() ? 0 : mark.line + 1;
  }

 private:
  std::filesystem::path file_;
  std::vector<std::string>* problems_;
};

std::string did_you_mean(const std::string& typed,
                         const std::vector<std::string>& known) {
  auto best = closest_name(typed, known);
  return best ? "; did you mean \"" + *best + "\"?" : std::string();
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += (out.empty() ? "" : "\n") + line;
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Rejects keys kube-scheduler would reject too (it decodes strictly), so a
// typo like `enable:` is caught here instead of silently ignored.
void check_keys(const Reporter& r, const YAML::Node& map,
                const std::vector<std::string>& known,
                const std::string& what) {
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      r.report(kv.first, "unknown field \"" + key + "\" in " + what +
                             did_you_mean(key, known) +
                             " (known fields: " + join(known) + ")");
    }
  }
}

std::string scalar_string(const Reporter& r, const YAML::Node& node,
                          const std::string& what) {
  if (!node.IsScalar()) r.fail(node, what + " must be a string");
  return node.Scalar();
}

// A decimal (or hexadecimal) number as kube-scheduler's YAML reader takes
// it: a double, or, when it does not fit one (1e400), the text itself, as
// Go's strconv.ParseFloat fails there and the scalar stays a string. Never
// throws (std::stod would, for 1e400 and for 1e-400).
nlohmann::json number_or_string(const std::string& s) {
  errno = 0;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() ||
      (errno == ERANGE && std::fabs(d) == HUGE_VAL)) {
    return s;
  }
  return d;  // an underflow is 0 or a denormal, as in Go
}

// YAML 1.2 core schema resolution of a plain (unquoted) scalar.
nlohmann::json plain_scalar_to_json(const std::string& s) {
  static const std::regex kNull("~|null|Null|NULL|");
  static const std::regex kTrue("true|True|TRUE");
  static const std::regex kFalse("false|False|FALSE");
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kOct("0o[0-7]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  static const std::regex kFloat(
      "[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  static const std::regex kInf("[-+]?\\.(inf|Inf|INF)");
  static const std::regex kNan("\\.(nan|NaN|NAN)");

  if (std::regex_match(s, kNull)) return nullptr;
  if (std::regex_match(s, kTrue)) return true;
  if (std::regex_match(s, kFalse)) return false;
  auto parse_int = [&](const std::string& digits, int base,
                       bool negative) -> nlohmann::json {
    uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(
        digits.data(), digits.data() + digits.size(), value, base);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
      // Too large for 64 bits: a decimal stays a number if a double holds
      // it; 0o/0x and what overflows a double stay strings (as in Go).
      return base == 10 ? number_or_string(s) : nlohmann::json(s);
    }
    if (!negative) return value;
    if (value <= static_cast<uint64_t>(INT64_MAX) + 1) {
      return static_cast<int64_t>(0 - value);
    }
    return -static_cast<double>(value);
  };
  if (std::regex_match(s, kInt)) {
    const bool negative = s[0] == '-';
    const std::string digits = (s[0] == '-' || s[0] == '+') ? s.substr(1) : s;
    return parse_int(digits, 10, negative);
  }
  if (std::regex_match(s, kOct)) return parse_int(s.substr(2), 8, false);
  if (std::regex_match(s, kHex)) return parse_int(s.substr(2), 16, false);
  if (std::regex_match(s, kFloat)) return number_or_string(s);
  // JSON has no infinity or NaN; keep their YAML spelling as a string.
  if (std::regex_match(s, kInf) || std::regex_match(s, kNan)) return s;
  return s;
}

nlohmann::json yaml_to_json(const Reporter& r, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      // "!" marks a quoted (non-plain) scalar: always a string. An explicit
      // !!str tag too.
      if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") {
        return node.Scalar();
      }
      return plain_scalar_to_json(node.Scalar());
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : node) out.push_back(yaml_to_json(r, item));
      return out;
    }
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          r.report(kv.first, "args keys must be strings");
          continue;
        }
        out[kv.first.Scalar()] = yaml_to_json(r, kv.second);
      }
      return out;
    }
  }
  return nullptr;
}

std::vector<std::string> point_names() {
  std::vector<std::string> names;
  for (auto p : all_extension_points()) names.emplace_back(to_string(p));
  return names;
}

std::vector<PluginRef> parse_plugin_list(const Reporter& r,
                                         const YAML::Node& list,
                                         const std::string& what) {
  std::vector<PluginRef> out;
  if (!list || list.IsNull()) return out;
  if (!list.IsSequence()) {
    r.fail(list, what + " must be a list of {name: ..., weight: ...}");
  }
  for (const auto& item : list) {
    // A malformed entry is left out; the others are still read.
    r.recover([&] {
      if (!item.IsMap()) {
        r.fail(item, what + " entries must be mappings like {name: HwEncrypt}");
      }
      check_keys(r, item, {"name", "weight"}, "an entry of " + what);
      PluginRef ref;
      ref.line = Reporter::line_of(item);
      if (!item["name"]) r.fail(item, "an entry of " + what + " has no name");
      ref.name = scalar_string(r, item["name"], "the plugin name");
      if (ref.name.empty()) {
        r.fail(item, "an entry of " + what + " has no name");
      }
      if (const auto weight = item["weight"]; weight && !weight.IsNull()) {
        try {
          ref.weight = weight.as<int>();
        } catch (const YAML::Exception&) {
          // Keep the entry (its name is still checked), without a weight.
          r.report(weight, what + ": the weight of plugin \"" + ref.name +
                               "\" must be an integer, not \"" +
                               (weight.IsScalar() ? weight.Scalar()
                                                  : std::string("a list or "
                                                                "mapping")) +
                               "\"");
        }
      }
      out.push_back(std::move(ref));
    });
  }
  return out;
}

Profile parse_profile(const Reporter& r, const YAML::Node& node) {
  if (!node.IsMap()) r.fail(node, "each entry of profiles must be a mapping");
  check_keys(
      r, node,
      {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"},
      "a profile");
  Profile profile;
  profile.line = Reporter::line_of(node);
  profile.scheduler_name = "default-scheduler";
  if (const auto name = node["schedulerName"]; name && !name.IsNull()) {
    profile.scheduler_name = scalar_string(r, name, "schedulerName");
  }
  const std::string in_profile = "profile \"" + profile.scheduler_name + "\"";

  const auto plugins = node["plugins"];
  if (plugins && !plugins.IsNull() && !plugins.IsMap()) {
    r.report(plugins, in_profile +
                          ": plugins must be a mapping of extension "
                          "points (multiPoint, filter, score, ...)");
  } else if (plugins && !plugins.IsNull()) {
    const auto known = point_names();
    for (const auto& kv : plugins) {
      r.recover([&] {
        const std::string point_name = kv.first.Scalar();
        auto it = std::find(known.begin(), known.end(), point_name);
        if (it == known.end()) {
          r.fail(kv.first, in_profile + ": \"" + point_name +
                               "\" is not a kube-scheduler extension point" +
                               did_you_mean(point_name, known) +
                               " (extension points: " + join(known) + ")");
        }
        const auto point = all_extension_points()[it - known.begin()];
        const std::string what =
            in_profile + ", extension point \"" + point_name + "\"";
        PluginSet set;
        if (!kv.second.IsNull()) {
          if (!kv.second.IsMap()) {
            r.fail(kv.second, what +
                                  " must be a mapping with enabled and/or "
                                  "disabled lists");
          }
          check_keys(r, kv.second, {"enabled", "disabled"}, what);
          r.recover([&] {
            set.enabled =
                parse_plugin_list(r, kv.second["enabled"], what + ": enabled");
          });
          r.recover([&] {
            set.disabled = parse_plugin_list(r, kv.second["disabled"],
                                             what + ": disabled");
          });
        }
        profile.plugins[point] = std::move(set);
      });
    }
  }

  const auto configs = node["pluginConfig"];
  if (configs && !configs.IsNull() && !configs.IsSequence()) {
    r.report(configs, in_profile +
                          ": pluginConfig must be a list of "
                          "{name: ..., args: {...}}");
  } else if (configs && !configs.IsNull()) {
    std::set<std::string> seen;
    for (const auto& item : configs) {
      r.recover([&] {
        if (!item.IsMap()) {
          r.fail(item, in_profile + ": pluginConfig entries must be mappings");
        }
        check_keys(r, item, {"name", "args"}, "a pluginConfig entry");
        PluginConfigEntry entry;
        entry.line = Reporter::line_of(item);
        if (!item["name"]) {
          r.fail(item, in_profile + ": a pluginConfig entry has no name");
        }
        entry.name = scalar_string(r, item["name"], "the pluginConfig name");
        if (!seen.insert(entry.name).second) {
          r.fail(item, in_profile + ": pluginConfig for \"" + entry.name +
                           "\" appears twice; merge the two entries "
                           "(kube-scheduler rejects duplicates)");
        }
        const auto args = item["args"];
        if (!args || args.IsNull()) {
          entry.args_json = "{}";
        } else if (!args.IsMap()) {
          r.fail(args, in_profile + ": the args of \"" + entry.name +
                           "\" must be a mapping");
        } else {
          try {
            entry.args_json = yaml_to_json(r, args).dump();
          } catch (const nlohmann::json::type_error& e) {
            // YAML must be UTF-8; yaml-cpp passes other bytes through and
            // JSON cannot carry them (found by fuzz/config).
            r.fail(args, in_profile + ": the args of \"" + entry.name +
                             "\" contain bytes that are not valid UTF-8 (" +
                             e.what() + "); save the file as UTF-8");
          }
        }
        profile.plugin_config.push_back(std::move(entry));
      });
    }
  }
  return profile;
}

}  // namespace

const char* to_string(ExtensionPoint point) {
  switch (point) {
    case ExtensionPoint::kMultiPoint:
      return "multiPoint";
    case ExtensionPoint::kPreEnqueue:
      return "preEnqueue";
    case ExtensionPoint::kQueueSort:
      return "queueSort";
    case ExtensionPoint::kPreFilter:
      return "preFilter";
    case ExtensionPoint::kFilter:
      return "filter";
    case ExtensionPoint::kPostFilter:
      return "postFilter";
    case ExtensionPoint::kPreScore:
      return "preScore";
    case ExtensionPoint::kScore:
      return "score";
    case ExtensionPoint::kReserve:
      return "reserve";
    case ExtensionPoint::kPermit:
      return "permit";
    case ExtensionPoint::kPreBind:
      return "preBind";
    case ExtensionPoint::kBind:
      return "bind";
    case ExtensionPoint::kPostBind:
      return "postBind";
    case ExtensionPoint::kPlacementGenerate:
      return "placementGenerate";
    case ExtensionPoint::kPlacementScore:
      return "placementScore";
    case ExtensionPoint::kPodGroupPostFilter:
      return "podGroupPostFilter";
  }
  return "unknown";
}

const std::vector<ExtensionPoint>& all_extension_points() {
  static const std::vector<ExtensionPoint> kAll = {
      ExtensionPoint::kMultiPoint,     ExtensionPoint::kPreEnqueue,
      ExtensionPoint::kQueueSort,      ExtensionPoint::kPreFilter,
      ExtensionPoint::kFilter,         ExtensionPoint::kPostFilter,
      ExtensionPoint::kPreScore,       ExtensionPoint::kScore,
      ExtensionPoint::kReserve,        ExtensionPoint::kPermit,
      ExtensionPoint::kPreBind,        ExtensionPoint::kBind,
      ExtensionPoint::kPostBind,       ExtensionPoint::kPlacementGenerate,
      ExtensionPoint::kPlacementScore, ExtensionPoint::kPodGroupPostFilter,
  };
  return kAll;
}

ConfigError::ConfigError(const std::string& message)
    : std::runtime_error(message), problems_{message} {}

ConfigError::ConfigError(std::vector<std::string> problems)
    : std::runtime_error(join_lines(problems)),
      problems_(std::move(problems)) {}

SchedulerConfig load_scheduler_config(const std::filesystem::path& file,
                                      std::vector<std::string>& problems) {
  std::ifstream in(file);
  if (!in) {
    throw ConfigError(file.string() +
                      ": cannot read the scheduler configuration; check the "
                      "path and its permissions");
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse_scheduler_config(text.str(), file, problems);
}

SchedulerConfig load_scheduler_config(const std::filesystem::path& file) {
  std::vector<std::string> problems;
  SchedulerConfig config = load_scheduler_config(file, problems);
  if (!problems.empty()) throw ConfigError(std::move(problems));
  return config;
}

SchedulerConfig parse_scheduler_config(const std::string& yaml,
                                       const std::filesystem::path& file) {
  std::vector<std::string> problems;
  SchedulerConfig config = parse_scheduler_config(yaml, file, problems);
  if (!problems.empty()) throw ConfigError(std::move(problems));
  return config;
}

SchedulerConfig parse_scheduler_config(const std::string& yaml,
                                       const std::filesystem::path& file,
                                       std::vector<std::string>& problems) {
  const Reporter r(file, problems);
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    throw ConfigError((file.empty() ? "<config>" : file.string()) + ":" +
                      std::to_string(e.mark.line + 1) +
                      ": not valid YAML: " + e.msg);
  }
  // Before anything walks it: a recursive anchor or an alias bomb.
  if (auto bad = yaml_bounds_problem(root, yaml_bounds_for(yaml.size()))) {
    throw ConfigError((file.empty() ? "<config>" : file.string()) + ":" +
                      std::to_string(bad->line) + ": " + bad->message);
  }
  if (!root.IsMap()) {
    throw ConfigError(
        (file.empty() ? "<config>" : file.string()) +
        ": not a KubeSchedulerConfiguration (expected a YAML mapping with "
        "apiVersion: " +
        kApiVersion + " and kind: " + kKind + ")");
  }
  // A wrong apiVersion or kind is reported, and the profiles are still
  // read so that their problems show up in the same run.
  const auto api = root["apiVersion"];
  if (!api || !api.IsScalar() || api.Scalar() != kApiVersion) {
    const std::string found =
        api && api.IsScalar() ? "\"" + api.Scalar() + "\"" : "missing";
    r.report(api ? api : root, std::string("apiVersion is ") + found +
                                   "; schedplug reads " + kApiVersion +
                                   " (older versions were removed from "
                                   "kube-scheduler)");
  }
  const auto kind = root["kind"];
  if (!kind || !kind.IsScalar() || kind.Scalar() != kKind) {
    const std::string found =
        kind && kind.IsScalar() ? "\"" + kind.Scalar() + "\"" : "missing";
    r.report(kind ? kind : root,
             std::string("kind is ") + found + "; expected " + kKind);
  }

  SchedulerConfig config;
  config.file = file;
  const auto profiles = root["profiles"];
  if (!profiles || profiles.IsNull()) {
    // kube-scheduler's default: one profile with the default plugins.
    Profile profile;
    profile.scheduler_name = "default-scheduler";
    config.profiles.push_back(std::move(profile));
    return config;
  }
  if (!profiles.IsSequence()) {
    r.report(profiles, "profiles must be a list");
    return config;
  }
  std::set<std::string> names;
  for (const auto& node : profiles) {
    r.recover([&] {
      Profile profile = parse_profile(r, node);
      if (!names.insert(profile.scheduler_name).second) {
        r.fail(node, "two profiles are named \"" + profile.scheduler_name +
                         "\"; every profile needs its own schedulerName");
      }
      config.profiles.push_back(std::move(profile));
    });
  }
  return config;
}

}  // namespace schedplug::host
