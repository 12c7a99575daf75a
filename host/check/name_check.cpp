#include "host/check/name_check.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "host/check/suggest.hpp"
#include "host/config/resolve.hpp"

namespace schedplug::host {
namespace {

std::string join(const std::vector<std::string>& items,
                 const std::string& last_sep = " and ") {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? last_sep : ", ";
    out += items[i];
  }
  return out;
}

// What a native plugin offers, in kube-scheduler's words.
std::string offers(const PluginLibrary& lib) {
  std::vector<std::string> points;
  if (lib.has_filter()) points.emplace_back("PreFilter/Filter");
  if (lib.has_score()) points.emplace_back("PreScore/Score");
  if (lib.has_reserve()) points.emplace_back("Reserve");
  if (lib.has_permit()) points.emplace_back("Permit");
  if (lib.has_pre_bind()) points.emplace_back("PreBind");
  if (lib.has_pre_enqueue()) points.emplace_back("PreEnqueue");
  return points.empty() ? "no extension point" : join(points);
}

// Any of the ABI v1.6 hooks.
bool has_v16_hook(const PluginLibrary& lib) {
  return lib.has_reserve() || lib.has_permit() || lib.has_pre_bind() ||
         lib.has_pre_enqueue();
}

// The YAML extension points under which `lib` may be enabled.
std::vector<std::string> allowed_points(const PluginLibrary& lib) {
  std::vector<std::string> points;
  if (lib.has_filter() || lib.has_score() || has_v16_hook(lib))
    points.emplace_back("multiPoint");
  if (lib.has_filter()) {
    points.emplace_back("preFilter");
    points.emplace_back("filter");
  }
  if (lib.has_score()) {
    points.emplace_back("preScore");
    points.emplace_back("score");
  }
  if (lib.has_reserve()) points.emplace_back("reserve");
  if (lib.has_permit()) points.emplace_back("permit");
  if (lib.has_pre_bind()) points.emplace_back("preBind");
  if (lib.has_pre_enqueue()) points.emplace_back("preEnqueue");
  return points;
}

// Whether a native plugin implements `point`; also what it would need.
bool implements(const PluginLibrary& lib, ExtensionPoint point,
                std::string* needs) {
  switch (point) {
    case ExtensionPoint::kMultiPoint:
      *needs = "Filter, Score, Reserve, Permit, PreBind or PreEnqueue";
      return lib.has_filter() || lib.has_score() || has_v16_hook(lib);
    case ExtensionPoint::kPreFilter:
      *needs = "PreFilter";
      return lib.has_filter();
    case ExtensionPoint::kFilter:
      *needs = "Filter";
      return lib.has_filter();
    case ExtensionPoint::kPreScore:
      *needs = "PreScore";
      return lib.has_score();
    case ExtensionPoint::kScore:
      *needs = "Score";
      return lib.has_score();
    case ExtensionPoint::kReserve:
      // The shim serves it for every native plugin (it tells the host what
      // became of each cycle, docs/explain.md), and calls reserve() too.
      *needs = "Filter, Score or Reserve";
      return lib.has_filter() || lib.has_score() || lib.has_reserve();
    case ExtensionPoint::kPostFilter:
      // The shim serves it for every native plugin (docs/explain.md).
      *needs = "Filter or Score";
      return lib.has_filter() || lib.has_score();
    case ExtensionPoint::kPermit:
      *needs = "Permit";
      return lib.has_permit();
    case ExtensionPoint::kPreBind:
      *needs = "PreBind";
      return lib.has_pre_bind();
    case ExtensionPoint::kPreEnqueue:
      *needs = "PreEnqueue";
      return lib.has_pre_enqueue();
    default:
      *needs = "";
      return false;
  }
}

class Checker {
 public:
  Checker(const SchedulerConfig& config,
          const std::vector<std::shared_ptr<PluginLibrary>>& plugins,
          const std::vector<LoadProblem>& load_problems)
      : config_(config), load_problems_(load_problems) {
    for (const auto& lib : plugins) {
      by_name_[lib->name()] = lib;
      loaded_names_.push_back(lib->name());
    }
    candidates_ = loaded_names_;
    for (const auto& n : in_tree_plugin_names()) candidates_.push_back(n);
  }

  std::vector<Diagnostic> run() {
    for (const auto& p : load_problems_) error(p.message);
    for (const auto& [name, lib] : by_name_) {
      if (is_in_tree_plugin(name)) {
        error(lib->file().string() + ": plugin name \"" + name +
              "\" is the name of an upstream in-tree plugin, so profiles "
              "that enable \"" +
              name +
              "\" get the in-tree plugin, never this one; rename the plugin");
      }
    }
    std::set<std::string> enabled_somewhere;
    for (const auto& profile : config_.profiles) {
      check_profile(profile, enabled_somewhere);
    }
    for (const auto& [name, lib] : by_name_) {
      if (!is_in_tree_plugin(name) && enabled_somewhere.count(name) == 0) {
        warning(lib->file().string() + ": plugin \"" + name +
                    "\" is loaded but no profile in " + file_name() +
                    " enables it; enable it (e.g. under multiPoint) or remove "
                    "the file",
                std::numeric_limits<int>::max());
      }
    }
    std::vector<Diagnostic> out;
    for (auto* list : {&errors_, &warnings_}) {
      std::stable_sort(
          list->begin(), list->end(),
          [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [line, d] : *list) out.push_back(std::move(d));
    }
    return out;
  }

 private:
  std::string file_name() const {
    return config_.file.empty() ? "<config>" : config_.file.string();
  }
  std::string where(int line) const {
    return file_name() + (line > 0 ? ":" + std::to_string(line) : "");
  }
  std::string at(const Profile& profile, ExtensionPoint point, int line) const {
    return where(line) + ": profile \"" + profile.scheduler_name +
           "\", extension point \"" + to_string(point) + "\": ";
  }

  // `line` orders findings the way the file reads (0: before any line).
  void error(std::string message, int line = 0) {
    errors_.push_back({line, {Severity::kError, std::move(message)}});
  }
  void warning(std::string message, int line = 0) {
    warnings_.push_back({line, {Severity::kWarning, std::move(message)}});
  }

  // "did you mean ..." for a name that is neither in-tree nor loaded.
  std::string suggestion(const std::string& name) const {
    auto best = closest_name(name, candidates_);
    if (!best) return {};
    std::string text = "did you mean \"" + *best + "\"";
    if (auto lib = by_name_.find(*best); lib != by_name_.end()) {
      text += " (" + lib->second->file().string() + ")";
    } else {
      text += " (in-tree)";
    }
    text += "?";
    if (equals_ignoring_case(*best, name)) text += " names are case-sensitive";
    return text;
  }

  // A file that failed to load and whose error names `name`, if any.
  std::string failed_file_mentioning(const std::string& name) const {
    for (const auto& p : load_problems_) {
      if (p.message.find("\"" + name + "\"") != std::string::npos) {
        return p.file.string();
      }
    }
    return {};
  }

  void check_enabled(const Profile& profile, ExtensionPoint point,
                     const PluginRef& ref) {
    const std::string& name = ref.name;
    if (is_in_tree_plugin(name)) return;
    auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      std::string msg = at(profile, point, ref.line) + "plugin \"" + name +
                        "\" is not an in-tree plugin and no loaded .so "
                        "reports it; ";
      if (auto failed = failed_file_mentioning(name); !failed.empty()) {
        msg += failed + " names it but failed to load (see its error)";
        if (auto s = suggestion(name); !s.empty()) msg += "; " + s;
      } else if (auto s = suggestion(name); !s.empty()) {
        msg += s;
      } else {
        msg +=
            "put the plugin's .so in the plugins directory, or fix the "
            "name" +
            (loaded_names_.empty() ? std::string(" (no plugin is loaded)")
                                   : " (loaded: " + join(loaded_names_) + ")");
      }
      error(msg, ref.line);
      return;
    }
    const PluginLibrary& lib = *it->second;
    std::string needs;
    if (implements(lib, point, &needs)) return;
    const std::string head = at(profile, point, ref.line) + "plugin \"" + name +
                             "\" (" + lib.file().string() + ") ";
    const auto allowed = allowed_points(lib);
    if (needs.empty()) {
      error(head + "cannot be enabled under " + to_string(point) +
                ": native plugins offer only PreFilter/Filter and "
                "PreScore/Score (and reserve and postFilter, where the shim "
                "tells schedplug-host what became of each cycle)" +
                (allowed.empty()
                     ? std::string()
                     : "; this one offers " + offers(lib) +
                           ", enable it under " + join(allowed, " or ")),
            ref.line);
    } else if (allowed.empty()) {
      error(head +
                "implements no extension point (neither filter nor "
                "score); give it a filter or score hook",
            ref.line);
    } else {
      error(head + "does not implement " + needs + " (it offers " +
                offers(lib) + "); enable it under " + join(allowed, " or ") +
                ", or add a " +
                (point == ExtensionPoint::kPreFilter ||
                         point == ExtensionPoint::kFilter
                     ? "filter"
                     : "score") +
                " hook to the plugin",
            ref.line);
    }
  }

  void check_profile(const Profile& profile,
                     std::set<std::string>& enabled_somewhere) {
    for (const auto& [point, set] : profile.plugins) {
      std::set<std::string> seen;
      for (const auto& ref : set.enabled) {
        enabled_somewhere.insert(ref.name);
        if (!seen.insert(ref.name).second && by_name_.count(ref.name) != 0) {
          error(at(profile, point, ref.line) + "plugin \"" + ref.name +
                    "\" is enabled twice; kube-scheduler refuses a plugin "
                    "registered twice at one extension point; remove one entry",
                ref.line);
          continue;
        }
        check_enabled(profile, point, ref);
      }
      for (const auto& ref : set.disabled) {
        if (ref.name == "*" || is_in_tree_plugin(ref.name) ||
            by_name_.count(ref.name) != 0) {
          continue;
        }
        std::string s = suggestion(ref.name);
        warning(
            at(profile, point, ref.line) + "disables plugin \"" + ref.name +
                "\", which is neither in-tree nor loaded, so this entry has "
                "no effect" +
                (s.empty() ? std::string() : "; " + s),
            ref.line);
      }
    }
    warn_lazy_calls(profile);
    for (const auto& entry : profile.plugin_config) {
      if (is_in_tree_plugin(entry.name) || by_name_.count(entry.name) != 0) {
        continue;
      }
      std::string s = suggestion(entry.name);
      warning(where(entry.line) + ": profile \"" + profile.scheduler_name +
                  "\": pluginConfig for \"" + entry.name +
                  "\" matches no in-tree or loaded plugin, so its args are "
                  "ignored" +
                  (s.empty() ? std::string() : "; " + s),
              entry.line);
    }
  }

  // A profile that enables native plugins at filter (score) but none at
  // preFilter (preScore) works, at a cost: the shim makes the cycle's
  // PreFilter (PreScore) call lazily. Say so and how to avoid it.
  void warn_lazy_calls(const Profile& profile) {
    std::vector<std::shared_ptr<PluginLibrary>> libs;
    for (const auto& [name, lib] : by_name_) libs.push_back(lib);
    struct Pair {
      ExtensionPoint pre, main;
      const char* from;
    };
    for (const Pair& pair :
         {Pair{ExtensionPoint::kPreFilter, ExtensionPoint::kFilter, "Filter"},
          Pair{ExtensionPoint::kPreScore, ExtensionPoint::kScore,
               "NormalizeScore"}}) {
      const auto main = native_plugins_at(profile, pair.main, libs);
      if (main.empty() || !native_plugins_at(profile, pair.pre, libs).empty()) {
        continue;
      }
      std::vector<std::string> quoted;
      for (const auto& n : main) quoted.push_back("\"" + n + "\"");
      const std::string pre = to_string(pair.pre);
      const std::string point = to_string(pair.main);
      warning(
          where(profile.line) + ": profile \"" + profile.scheduler_name +
              "\": native plugin" + (main.size() == 1 ? " " : "s ") +
              join(quoted) + (main.size() == 1 ? " is" : " are") +
              " enabled at " + point + " but no native plugin is at " + pre +
              "; this works, but costs more: the shim makes the " + "cycle's " +
              std::string(pair.pre == ExtensionPoint::kPreFilter ? "PreFilter"
                                                                 : "PreScore") +
              " call lazily from " + pair.from +
              " while kube-scheduler's parallel workers wait for it "
              "(counted in schedplug_shim_lazy_calls_total); enable " +
              (main.size() == 1 ? "it" : "them") +
              " under multiPoint instead, or under " + pre + " as well",
          profile.line);
    }
  }

  const SchedulerConfig& config_;
  const std::vector<LoadProblem>& load_problems_;
  std::map<std::string, std::shared_ptr<PluginLibrary>> by_name_;
  std::vector<std::string> loaded_names_;
  std::vector<std::string> candidates_;
  std::vector<std::pair<int, Diagnostic>> errors_;
  std::vector<std::pair<int, Diagnostic>> warnings_;
};

}  // namespace

std::vector<Diagnostic> check_names(
    const SchedulerConfig& config,
    const std::vector<std::shared_ptr<PluginLibrary>>& plugins,
    const std::vector<LoadProblem>& load_problems) {
  return Checker(config, plugins, load_problems).run();
}

bool has_errors(const std::vector<Diagnostic>& diagnostics) {
  return std::any_of(
      diagnostics.begin(), diagnostics.end(),
      [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

}  // namespace schedplug::host
